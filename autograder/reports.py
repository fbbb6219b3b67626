"""What grading leaves behind: Gradescope results.json and feedback.html per submission, grades.csv per class.

Files are written whole to a temporary name and renamed, so a run killed
midway never leaves a half-written report that looks finished.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
from pathlib import Path
from typing import Any

from .engine import ALL_PARTS, Graded


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def status(graded: Graded) -> str:
    """One word or phrase for grades.csv: graded, or what went wrong."""
    if graded.internal_error:
        return "grader error"
    if graded.submission.problems:
        return "graded with problems: " + "; ".join(graded.submission.problems)
    return "graded"


def results_json(graded: Graded) -> dict[str, Any]:
    """The Gradescope results format: one test entry per check."""
    tests = [c.as_gradescope() for c in graded.checks]
    lines = [f"{part}: {got:g} / {most:g}" for part, (got, most) in graded.part_scores().items()]
    lines += [f"Note: {p}" for p in graded.submission.problems]
    return {
        "score": sum(t["score"] for t in tests),
        "output": "\n".join(lines),
        "visibility": "visible",
        "tests": tests,
    }


def feedback_html(graded: Graded) -> str:
    """A page a student can read: each part, each check, and what went wrong."""
    esc = html.escape
    out = [
        "<!doctype html><meta charset='utf-8'>",
        f"<title>Feedback: {esc(graded.submission.id)}</title>",
        "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
        ".failed{color:#a00}.passed{color:#070}pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap}</style>",
        f"<h1>Feedback for {esc(graded.submission.id)}</h1>",
    ]
    for problem in graded.submission.problems:
        out.append(f"<p class='failed'>Note: {esc(problem)}</p>")
    scores = graded.part_scores()
    for part in scores:
        got, most = scores[part]
        out.append(f"<h2>{esc(part)}: {got:g} / {most:g}</h2><ul>")
        for c in (c for c in graded.checks if c.part == part):
            state = "passed" if c.passed else "failed"
            out.append(f"<li class='{state}'>{esc(c.name)} ({c.max_score:g} points): {state}")
            if not c.passed:
                out.append(f"<pre>{esc(chr(10).join(c.outputs))}</pre>")
            out.append("</li>")
        out.append("</ul>")
    return "\n".join(out) + "\n"


def grades_csv(rows: list[dict[str, Any]]) -> str:
    """One row per submission: each part's score, the total and a status."""
    buffer = io.StringIO()
    fields = ["submission", *ALL_PARTS, "total", "max", "status"]
    writer = csv.DictWriter(buffer, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for row in sorted(rows, key=lambda r: r["submission"]):
        writer.writerow({k: row.get(k, "") for k in fields})
    return buffer.getvalue()


def grade_row(graded: Graded) -> dict[str, Any]:
    scores = graded.part_scores()
    row: dict[str, Any] = {"submission": graded.submission.id, "status": status(graded)}
    row.update({part: f"{got:g}" for part, (got, _) in scores.items()})
    row["total"] = f"{sum(got for got, _ in scores.values()):g}"
    row["max"] = f"{sum(most for _, most in scores.values()):g}"
    return row


def write_submission_reports(graded: Graded, out: Path) -> dict[str, Any]:
    """results.json and feedback.html in out/<id>/; returns the grades.csv row, also kept as row.json."""
    folder = out / graded.submission.id
    row = grade_row(graded)
    write_atomically(folder / "feedback.html", feedback_html(graded))
    write_atomically(folder / "results.json", json.dumps(results_json(graded), indent=1, ensure_ascii=False))
    write_atomically(folder / "row.json", json.dumps(row))  # last: its presence marks the submission done
    return row


def where_reports_are(out: Path, rows: list[dict[str, Any]], gradebook: str = "") -> str:
    """The closing lines of a run: where each kind of report is."""
    example = min((r["submission"] for r in rows), default="<submission>")
    lines = [
        "Reports:",
        f"  feedback for each student:  {out / example / 'feedback.html'}  (one folder per submission)",
        f"  Gradescope results:         {out / example / 'results.json'}",
        f"  class table:                {out / 'grades.csv'}",
    ]
    if gradebook:
        lines.append("  " + gradebook)
    return "\n".join(lines)
