"""The student's feedback page: the total and each part's score first, then each part, each check
(with its note when a passing one has one: the quiz's question, answer and why it is right),
and for a failed one what went wrong, with the pictures its grader attached (reports.figures:
heatmaps of expected against yours, a timing study on log-log axes, the worst entries). One
self-contained file: no script, nothing fetched.

The summary says at once what a student needs: full marks, or which parts lost points and the likely
mistake behind each (the graders name one root cause per slip: engine.checks.Diagnosis), and which were
not attempted yet. A part whose checks all passed is folded away under its score.

A page stays small: at most MAX_PAGE_FIGURES pictures (the first failed checks' ones), each
bounded where it was made (engine.figures).
"""

from __future__ import annotations

import html
import re
from collections import Counter

from ..model.results import CheckResult, GradedSubmission
from ..isolation.protocol import NOT_IMPLEMENTED  # a check's trouble when the function still raises NotImplementedError
from ..text import NOT_ATTEMPTED, points
from .figures import figure_html

MAX_PAGE_FIGURES = 24

STYLE = ("body{font-family:sans-serif;max-width:60em;margin:2em auto}"
         ".failed{color:#a00}.passed{color:#070}pre{background:#f6f6f6;padding:.6em;white-space:pre-wrap}"
         ".figs{display:flex;flex-wrap:wrap;gap:.5em 1.5em;color:#222;margin:.3em 0 1em}"
         ".fig{margin:0;max-width:100%}.fig svg{max-width:100%;height:auto;display:block}"
         "figcaption{font-size:.85em;max-width:34em;margin:.2em 0}details{font-size:.85em}"
         "table.num{border-collapse:collapse;font-size:.85em;margin:.2em 0}"
         "table.num td,table.num th{border:1px solid #ccc;padding:1px 6px;text-align:right}"
         ".total{font-size:1.3em;margin:.2em 0 .4em}table.parts{border-collapse:collapse;margin:.3em 0 1.2em}"
         "table.parts td,table.parts th{border:1px solid #ddd;padding:2px 8px;text-align:left}"
         "table.parts td.n{text-align:right;white-space:nowrap}.mistake{margin:.2em 0 .6em}")


# The quiz grader's hint for a question whose answer is still None (autograder/graders/test_quiz.py): the grader's
# own words around the question's id, never a submission's.
UNANSWERED = re.compile(r'set answer_q\d+ to one of "a", "b", "c" or "d" in its answer cell')


def untouched(check: CheckResult) -> bool:
    """A failed check whose subject the student has not attempted yet: a function that still raises
    NotImplementedError (its trouble), a question left unanswered, a check a grader marked NOT_ATTEMPTED
    (its hint). The structured fields, never the message."""
    return not check.passed and (check.trouble == NOT_IMPLEMENTED or check.hint == NOT_ATTEMPTED or (
        check.part == "quiz" and UNANSWERED.match(check.hint) is not None))


def part_mistakes(checks: list[CheckResult]) -> list[tuple[str, int]]:
    """The likely mistakes the part's failed checks name, with how many name each, most named first."""
    named = Counter(c.hint for c in checks if not c.passed and c.hint and not untouched(c))
    return named.most_common()


def part_state(checks: list[CheckResult]) -> str:
    """"full marks", "not attempted" (every failed check untouched, none passed), or "lost points"."""
    failed = [c for c in checks if not c.passed]
    if not failed:
        return "full marks"
    return "not attempted" if all(untouched(c) for c in failed) and len(failed) == len(checks) else "lost points"


def _summary(graded: GradedSubmission) -> list[str]:
    esc = html.escape
    scores = graded.part_scores()
    if graded.error and not scores:
        return []
    total, most = graded.total, graded.max_score
    if all(c.passed for c in graded.checks):  # every part, one left out of the total too
        return [f"<p class='total passed'><b>Full marks: {total:g} / {points(most)}.</b> Every check of every part "
                f"passed ({len(graded.checks)} checks).</p>"]
    out = [f"<p class='total'><b>Total: {total:g} / {points(most)}</b></p>",
           "<table class='parts'><tr><th>part</th><th>score</th><th>what to look at</th></tr>"]
    for part, (got, top) in scores.items():
        checks = graded.checks_of(part)
        state = part_state(checks)
        if state == "full marks":
            note = "<span class='passed'>full marks</span>"
        elif state == "not attempted":
            note = "not attempted yet"
        else:
            mistakes = part_mistakes(checks)
            failed = sum(not c.passed for c in checks)
            left = sum(untouched(c) for c in checks)
            note = (f"<span class='failed'>{failed} check{'s' if failed != 1 else ''} failed</span>"
                    + (f"; likely mistake: {esc(mistakes[0][0])}" if len(mistakes) == 1 else
                       f"; {len(mistakes)} different likely mistakes, below" if mistakes else "")
                    + (f"; {left} not attempted yet" if left else ""))
        if part in graded.uncounted_parts():
            note += "; self-check: not counted in the total"
        out.append(f"<tr><td><a href='#part-{esc(part)}'>{esc(part)}</a></td><td class='n'>{got:g} / {top:g}</td>"
                   f"<td>{note}</td></tr>")
    out.append("</table>")
    return out


def _note(check: CheckResult) -> str:
    """What a passing check says besides "passed", when its grader gave it a note (the quiz: the question,
    the answer and why it is right); "" for most."""
    return f"<pre class='note'>{html.escape(chr(10).join(check.outputs))}</pre>" if check.passed and check.outputs else ""


def feedback_html(graded: GradedSubmission) -> str:
    esc = html.escape
    out = [
        "<!doctype html><html lang='en'><meta charset='utf-8'>",
        f"<title>Feedback: {esc(graded.id)}</title>",
        f"<style>{STYLE}</style>",
        "<main>",
        f"<h1>Feedback for {esc(graded.id)}</h1>",
    ]
    out += _summary(graded)
    for problem in graded.problems:
        out.append(f"<p class='failed'>Note: {esc(problem)}</p>")
    if graded.error:
        out.append(f"<p class='failed'>Your work could not be graded automatically ({esc(graded.error)}); "
                   "your instructor will grade it.</p>")
    shown = left_out = 0
    for part, (got, most) in graded.part_scores().items():
        checks = graded.checks_of(part)
        out.append(f"<h2 id='part-{esc(part)}'>{esc(part)}: {got:g} / {points(most)}</h2>")
        if part_state(checks) == "full marks":
            out.append(f"<details><summary class='passed'>All {len(checks)} checks passed</summary><ul>")
            out += [f"<li class='passed'>{esc(c.name)} ({points(c.max_score)}): passed{_note(c)}</li>" for c in checks]
            out.append("</ul></details>")
            continue
        mistakes = part_mistakes(checks)
        if len(mistakes) == 1:
            hint, named = mistakes[0]
            out.append(f"<p class='mistake failed'>Likely mistake: <b>{esc(hint)}</b> (named by {named} failed "
                       f"check{'s' if named > 1 else ''} below)</p>")
        out.append("<ul>")
        for c in checks:
            state = "passed" if c.passed else "failed"
            out.append(f"<li class='{state}'>{esc(c.name)} ({points(c.max_score)}): {state}")
            if not c.passed:
                out.append(f"<pre>{esc(chr(10).join(c.outputs))}</pre>")
                pictures = [p for p in map(figure_html, c.figures[:MAX_PAGE_FIGURES - shown]) if p]
                left_out += len(c.figures) - len(c.figures[:MAX_PAGE_FIGURES - shown])
                if pictures:
                    shown += len(pictures)
                    out.append(f"<div class='figs'>{''.join(pictures)}</div>")
            else:
                out.append(_note(c))
            out.append("</li>")
        out.append("</ul>")
    if left_out:
        out.append(f"<p><small>{left_out} more picture(s) left out to keep this page small: "
                   "the text of each check says what they would show.</small></p>")
    out.append("</main>")
    return "\n".join(out) + "\n"
