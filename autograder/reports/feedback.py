"""The student's feedback page: each part, each check, and for a failed one what went wrong, with
the pictures its grader attached (reports.figures: heatmaps of expected against yours, a timing
study on log-log axes, the worst entries). One self-contained file: no script, nothing fetched.

A page stays small: at most MAX_PAGE_FIGURES pictures (the first failed checks' ones), each
bounded where it was made (core.figures).
"""

from __future__ import annotations

import html

from ..core.results import GradedSubmission
from ..text import points
from .figures import figure_html

MAX_PAGE_FIGURES = 24

STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}"
         ".failed{color:#a00}.passed{color:#070}pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap}"
         ".figs{display:flex;flex-wrap:wrap;gap:.5em 1.5em;color:#222;margin:.3em 0 1em}"
         ".fig{margin:0;max-width:100%}.fig svg{max-width:100%;height:auto;display:block}"
         "figcaption{font-size:.85em;max-width:34em;margin:.2em 0}details{font-size:.85em}"
         "table.num{border-collapse:collapse;font-size:.85em;margin:.2em 0}"
         "table.num td,table.num th{border:1px solid #ccc;padding:1px 6px;text-align:right}")


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
    shown = left_out = 0
    for part, (got, most) in graded.part_scores().items():
        out.append(f"<h2>{esc(part)}: {got:g} / {points(most)}</h2><ul>")
        for c in graded.checks_of(part):
            state = "passed" if c.passed else "failed"
            out.append(f"<li class='{state}'>{esc(c.name)} ({points(c.max_score)}): {state}")
            if not c.passed:
                out.append(f"<pre>{esc(chr(10).join(c.outputs))}</pre>")
                pictures = [p for p in map(figure_html, c.figures[:MAX_PAGE_FIGURES - shown]) if p]
                left_out += len(c.figures) - len(c.figures[:MAX_PAGE_FIGURES - shown])
                if pictures:
                    shown += len(pictures)
                    out.append(f"<div class='figs'>{''.join(pictures)}</div>")
            out.append("</li>")
        out.append("</ul>")
    if left_out:
        out.append(f"<p><small>{left_out} more picture(s) left out to keep this page small: "
                   "the text of each check says what they would show.</small></p>")
    return "\n".join(out) + "\n"
