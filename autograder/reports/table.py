"""The class as a table: grades.csv (one row per submission: each part, the total, the status, what it
tried that an honest submission never does) and the same on the terminal, where every cell is made
printable first."""

from __future__ import annotations

import csv
import io

from .. import assignment
from ..model.results import GradedSubmission
from ..text import printable, spreadsheet_safe

# grades.csv's; "not_in_total": the parts reported in their columns whose scores the total and max leave out
# (a self-check quiz, model.results.Counting)
COLUMNS = ("submission", *assignment.PART_NAMES, "total", "max", "not_in_total", "status", "tampering")
TEXT_COLUMNS = ("submission", "status", "tampering")  # what a student can choose: never a formula in a spreadsheet


def rows(graded: list[GradedSubmission]) -> list[dict[str, str]]:
    """One row per submission, sorted by id; a part not graded in the run is empty."""
    found = []
    for g in sorted(graded, key=lambda g: g.id):
        scores = g.part_scores()
        row = {"submission": g.id, **{p: f"{scores[p][0]:g}" if p in scores else "" for p in assignment.PART_NAMES}}
        row.update(total=f"{g.total:g}", max=f"{g.max_score:g}", not_in_total=" ".join(g.uncounted_parts()),
                   status=g.status_text(), tampering=g.tampering.summary())
        found.append(row)
    return found


def grades_csv(graded: list[GradedSubmission]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: spreadsheet_safe(v) if k in TEXT_COLUMNS else v for k, v in row.items()} for row in rows(graded))
    return buffer.getvalue()


def class_table(graded: list[GradedSubmission]) -> str:
    """The table printed at the end of a run: the parts that count, their total, then apart from them and
    labelled, the parts the total leaves out (a self-check quiz), so that the total reads as grades.csv's."""
    if not graded:
        return "(no submissions)"
    left_out = [p for p in assignment.PART_NAMES if any(p in g.uncounted_parts() for g in graded)]
    counted = [p for p in assignment.PART_NAMES if p not in left_out]
    columns = ["submission", *counted, "total", *left_out, "status"]
    headings = [f"{c} (not counted)" if c in left_out else c for c in columns]
    body = [[printable(r[c], 120) for c in columns] for r in rows(graded)]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headings)]
    line = lambda cells: "  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(headings), line(["-" * w for w in widths]), *map(line, body), *_left_out(left_out)])


def _left_out(parts: list[str]) -> list[str]:
    """A line under the table naming the parts its totals leave out (a self-check quiz), if any."""
    return [f"(total: without {', '.join(parts)}, reported but not counted)"] if parts else []
