"""The student's feedback page: each part, each check, and for a failed one what went wrong."""

from __future__ import annotations

import html

from ..core.results import GradedSubmission
from ..text import points

STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}"
         ".failed{color:#a00}.passed{color:#070}pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap}")


def feedback_html(graded: GradedSubmission) -> str:
    esc = html.escape
    out = [
        "<!doctype html><meta charset='utf-8'>",
        f"<title>Feedback: {esc(graded.id)}</title>",
        f"<style>{STYLE}</style>",
        f"<h1>Feedback for {esc(graded.id)}</h1>",
    ]
    for problem in graded.problems:
        out.append(f"<p class='failed'>Note: {esc(problem)}</p>")
    if graded.error:
        out.append(f"<p class='failed'>Your work could not be graded automatically ({esc(graded.error)}); "
                   "your instructor will grade it.</p>")
    for part, (got, most) in graded.part_scores().items():
        out.append(f"<h2>{esc(part)}: {got:g} / {points(most)}</h2><ul>")
        for c in graded.checks_of(part):
            state = "passed" if c.passed else "failed"
            out.append(f"<li class='{state}'>{esc(c.name)} ({points(c.max_score)}): {state}")
            if not c.passed:
                out.append(f"<pre>{esc(chr(10).join(c.outputs))}</pre>")
            out.append("</li>")
        out.append("</ul>")
    return "\n".join(out) + "\n"
