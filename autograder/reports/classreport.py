"""The class at a glance, for the instructor: class_report.html, written by every grading run.

One self-contained page (inline SVG and CSS, no script, nothing fetched): how the scores are spread
(a histogram per part and for the total), the pass rate of every check (the most failed first), the
mistakes the graders diagnosed (the likely mistake each failed check named, counted once per
student and part, most common first, with the students' ids; what was left as released, a
function not implemented or a question unanswered, is no mistake and has a line of its own), what the answers
say about each check and quiz question (itemsection.py), the submissions that timed out,
crashed, ran out of memory or hit a grader error, the pairs whose code is unusually alike
(similarity.py: a signal for a human, never a penalty), what submissions tried that honest ones never
do (tampering.py: counted by the grader, never a penalty either), and how long each submission took.
Every picture has its numbers beside it as text. All of it comes from the structured fields the
grading process set on each check (`CheckResult.hint`, `.trouble`), never from text a
submission could have written into a message.
"""

from __future__ import annotations

import html
import math
import statistics
import time
from dataclasses import dataclass, field
from urllib.parse import quote

from .. import assignment
from ..model.results import TROUBLE_LABELS as CHECK_TROUBLES, GradedSubmission, Status
from ..model.tampering import KINDS as TAMPERING_KINDS
from .feedback import untouched
from .figures import fmt_seconds
from .itemsection import items_section
from .similarity import STYLE as SIMILARITY_STYLE, Similarity

INCIDENT_KINDS = CHECK_TROUBLES  # the kinds of trouble a check's result records, as the page names them
TROUBLE_KINDS = (*(kind for kind, _ in INCIDENT_KINDS), "grader error")
TROUBLE_LABELS = (*(kind for kind, _ in INCIDENT_KINDS), "grader errors")  # as TROUBLE_KINDS, for the page
TROUBLE_TITLE = ", ".join(TROUBLE_LABELS).capitalize()
FEEDBACK_FILE = "feedback.html"
PART_COLORS = ["#3b74b8", "#e07b00", "#2e7d32", "#8e24aa", "#c62828", "#00838f", "#6d4c41", "#546e7a"]
SLOWEST_SHOWN = 20

esc = html.escape

STYLE = """
body{font-family:sans-serif;max-width:72em;margin:1.5em auto;padding:0 1em;color:#222}
h1{margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd}
.lead{font-size:1.05em}nav a{margin-right:1em}
table{border-collapse:collapse;font-size:.9em;margin:.4em 0}
td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;vertical-align:top}
th{background:#f3f5f8}td.n{text-align:right;white-space:nowrap}
.hists{display:flex;flex-wrap:wrap;gap:.8em 1.6em}
figure{margin:0}figcaption{font-size:.82em;color:#444;max-width:22em}
.bar{display:inline-block;width:10em;height:.75em;background:#e8ebf0;vertical-align:middle;margin-right:.5em}
.bar span{display:block;height:100%}
td.rate-cell{white-space:nowrap;text-align:left}
.stack{display:inline-flex;width:16em;height:.8em;background:#f0f0f0;vertical-align:middle}
.stack span{display:block;height:100%}
td.hint{min-width:16em;max-width:28em}td.small{font-size:.85em}.low{color:#a00}.muted{color:#666}details{margin:.3em 0}
.key span{display:inline-block;width:.8em;height:.8em;margin:0 .3em 0 1em;vertical-align:middle}
"""


# ---------------------------------------------------------------- what the page counts


@dataclass
class Mistake:
    """One diagnosed mistake and who made it."""

    part: str
    hint: str
    students: list[str] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)


@dataclass
class Incident:
    """A submission whose code timed out, crashed or ran out of memory in some checks, or that we could not grade."""

    student: str
    kind: str  # one of INCIDENT_KINDS, or "grader error"
    checks: list[str] = field(default_factory=list)
    message: str = ""


def _part_order(part: str) -> int:
    return assignment.PART_NAMES.index(part) if part in assignment.PART_NAMES else len(assignment.PART_NAMES)


def diagnosed_mistakes(graded: list[GradedSubmission]) -> list[Mistake]:
    """Each (part, hint) the graders named for a failed check, once per student; most common first."""
    found: dict[tuple[str, str], Mistake] = {}
    for g in graded:
        for c in g.checks:
            if c.passed or c.internal_error or not c.hint or untouched(c):
                continue
            mistake = found.setdefault((c.part, c.hint), Mistake(c.part, c.hint))
            if g.id not in mistake.students:
                mistake.students.append(g.id)
            if c.name not in mistake.checks:
                mistake.checks.append(c.name)
    for m in found.values():
        m.students.sort()
    return sorted(found.values(), key=lambda m: (-len(m.students), _part_order(m.part), m.hint))


@dataclass
class NotAttempted:
    """What some students left as released in a part: all of it (`checks` empty), or these checks of a part
    they began (the same ones for each of `students`)."""

    part: str
    checks: tuple[str, ...]
    students: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """The checks as a few words: the functions (or the question) each check's name starts with, each once."""
        return ", ".join(dict.fromkeys(f for c in self.checks for f in c.partition(":")[0].split(", ")))


def not_attempted(graded: list[GradedSubmission]) -> list[NotAttempted]:
    """Parts whose every check failed untouched (a function still raising NotImplementedError, a question
    unanswered), else the untouched checks of the part, students with the same ones together: by part,
    whole parts first, then the most students first."""
    found: dict[tuple[str, tuple[str, ...]], NotAttempted] = {}
    for g in graded:
        if g.status is Status.GRADER_ERROR:
            continue
        for part in g.part_scores():
            checks = g.checks_of(part)
            left = tuple(c.name for c in checks if untouched(c))
            if left:
                key = (part, () if len(left) == len(checks) else left)
                found.setdefault(key, NotAttempted(*key)).students.append(g.id)
    for item in found.values():
        item.students.sort()
    return sorted(found.values(), key=lambda i: (_part_order(i.part), bool(i.checks), -len(i.students), i.checks))


def _not_attempted_html(graded: list[GradedSubmission]) -> str:
    items = not_attempted(graded)
    if not items:
        return ""
    said = []
    for i in items[:16]:
        who = ", ".join(_student(s) for s in i.students[:12]) + (", …" if len(i.students) > 12 else "")
        what = f"{esc(i.part)} (the whole part)" if not i.checks else f"{esc(i.part)}: {esc(i.label)}"
        said.append(f"<span class='untouched' data-part='{esc(i.part)}' data-checks='{esc(i.label)}' "
                    f"data-students='{esc(' '.join(i.students))}'>{what}: {len(i.students)} ({who})</span>")
    more = f"; and {len(items) - 16} more" if len(items) > 16 else ""
    return (f"<p id='not-attempted'><b>Not attempted</b> (left as released: not counted as mistakes): "
            f"{'; '.join(said)}{more}.</p>")


def incidents(graded: list[GradedSubmission]) -> list[Incident]:
    """Timeouts, crashes and memory exhaustion (from the checks' messages) and grader errors, by student."""
    found = []
    for g in sorted(graded, key=lambda g: g.id):
        if g.status is Status.GRADER_ERROR:
            found.append(Incident(g.id, "grader error", [], g.status_text()))
        for kind, troubles in INCIDENT_KINDS:
            checks, message = [], ""
            for c in g.checks:
                if not c.passed and not c.internal_error and c.trouble in troubles:
                    checks.append(f"{c.part}/{c.name}")
                    message = message or (c.outputs[0].splitlines()[0] if c.outputs and c.outputs[0] else "")
            if checks:
                found.append(Incident(g.id, kind, checks, message))
    return found


@dataclass
class CheckRate:
    part: str
    name: str
    points: float
    passed: int = 0
    graded: int = 0

    @property
    def rate(self) -> float:
        return self.passed / self.graded if self.graded else 1.0


def pass_rates(graded: list[GradedSubmission]) -> list[CheckRate]:
    """Every check with how many submissions passed it (grader errors left out); the least passed first."""
    rates: dict[tuple[str, str], CheckRate] = {}
    order: dict[tuple[str, str], int] = {}
    for g in graded:
        if g.error:
            continue
        for c in g.checks:
            key = (c.part, c.name)
            order.setdefault(key, len(order))
            if c.internal_error:
                continue
            rate = rates.setdefault(key, CheckRate(c.part, c.name, c.max_score))
            rate.graded += 1
            rate.passed += c.passed
    return sorted(rates.values(), key=lambda r: (r.rate, _part_order(r.part), order[(r.part, r.name)]))


# ---------------------------------------------------------------- pictures


def _nice_step(span: float, bins: int = 12) -> float:
    raw = span / bins
    for step in (1, 2, 2.5, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if step >= raw:
            return float(step)
    return float(10 ** math.ceil(math.log10(raw)))


def histogram(values: list[float], top: float, title: str, unit: str = "points") -> str:
    """A histogram of `values` from 0 to `top`, as a figure with its numbers."""
    per_score = unit == "points" and top <= 20 and all(float(v).is_integer() for v in values)
    if per_score:
        edges = [float(k) for k in range(int(top) + 2)]  # one bar per score
        labels = [f"{k:g}" for k in edges[:-1]]
    else:
        step = _nice_step(top or 1.0)
        count = max(1, math.ceil((top + 1e-9) / step))
        edges = [k * step for k in range(count + 1)]
        if edges[-1] <= top:
            edges.append(edges[-1] + step)
        labels = [f"{a:g}–{b:g}" for a, b in zip(edges, edges[1:])]
    counts = [0] * (len(edges) - 1)
    for v in values:
        k = next((i for i in range(len(counts)) if v < edges[i + 1]), len(counts) - 1)
        counts[max(0, k)] += 1
    width, height, left, bottom = 280, 140, 26, 110
    bar = (width - left - 6) / len(counts)
    peak = max(counts) or 1
    body = [f"<line x1='{left}' x2='{width - 4}' y1='{bottom}' y2='{bottom}' stroke='#999'/>"]
    for i, n in enumerate(counts):
        h = 90 * n / peak
        x = left + i * bar
        body.append(f"<rect class='bin' data-range='{esc(labels[i])}' data-count='{n}' x='{x + 1:.1f}' "
                    f"y='{bottom - h:.1f}' width='{max(1.0, bar - 2):.1f}' height='{h:.1f}' fill='#3b74b8'>"
                    f"<title>{esc(labels[i])} {unit}: {n}</title></rect>")
        if n:
            body.append(f"<text x='{x + bar / 2:.1f}' y='{bottom - h - 3:.1f}' text-anchor='middle' "
                        f"font-size='9'>{n}</text>")
    every = max(1, math.ceil(len(counts) / 7))
    for i in range(0, len(counts) if per_score else len(edges), every):  # a score under its bar, else bin edges
        x = left + i * bar + (bar / 2 if per_score else 0)
        body.append(f"<text x='{x:.1f}' y='{bottom + 12}' text-anchor='middle' font-size='9'>{edges[i]:g}</text>")
    body.append(f"<text x='{width - 4}' y='{bottom + 26}' text-anchor='end' font-size='9' fill='#555'>"
                f"{esc(unit)}</text>")
    body.append(f"<text x='{left - 4}' y='{bottom - 86}' text-anchor='end' font-size='9' fill='#555'>{peak}</text>")
    summary = (f"{title}: {len(values)} submission{'s' if len(values) != 1 else ''}"
               + (f", mean {statistics.fmean(values):.3g}, median {statistics.median(values):.3g}, "
                  f"range {min(values):.3g} to {max(values):.3g}" + (f" of {top:g}" if unit == "points" else "")
                  if values else ""))
    svg = (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' viewBox='0 0 {width} {height}' "
           f"role='img' font-family='sans-serif' font-size='10'><title>{esc(summary)}</title>{''.join(body)}</svg>")
    rows = "".join(f"<tr><td>{esc(label)}</td><td class='n'>{n}</td></tr>" for label, n in zip(labels, counts) if n)
    return (f"<figure class='hist' data-title='{esc(title)}'><b>{esc(title)}</b><br>{svg}"
            f"<figcaption>{esc(summary)}.</figcaption><details><summary>The numbers</summary><table>"
            f"<tr><th>{esc(unit)}</th><th>submissions</th></tr>{rows}</table></details></figure>")


def _bar(rate: float) -> str:
    color = "#c62828" if rate < 0.5 else "#e0a000" if rate < 0.8 else "#2e7d32"
    return f"<span class='bar'><span style='width:{100 * rate:.0f}%;background:{color}'></span></span>"


def _rate_row(r: CheckRate) -> str:
    cls = " class='low'" if r.rate < 0.5 else ""
    return (f"<tr class='rate' data-part='{esc(r.part)}' data-check='{esc(r.name)}' data-passed='{r.passed}' "
            f"data-graded='{r.graded}'><td>{esc(r.part)}</td><td{cls}>{esc(r.name)}</td><td class='n'>{r.points:g}</td>"
            f"<td class='rate-cell'>{_bar(r.rate)}{r.passed} / {r.graded} ({100 * r.rate:.0f}%)</td></tr>")


def _student(sid: str) -> str:
    return f"<a href='{esc(quote(sid))}/{FEEDBACK_FILE}'>{esc(sid)}</a>"


# ---------------------------------------------------------------- the page


def class_report_html(graded: list[GradedSubmission], kept: set[str] | frozenset[str] = frozenset(),
                      similar: Similarity | None = None, notes: list[str] | tuple[str, ...] = ()) -> str:
    """The class report of a run: every submission's result, `kept` those taken from an earlier run,
    `similar` the pairs of submissions unusually alike (similarity.py; None: no such section), `notes`
    what the PATHs held (who handed in what; no section without them)."""
    graded = sorted(graded, key=lambda g: g.id)
    scored = [g for g in graded if g.status is not Status.GRADER_ERROR]
    parts = sorted({c.part for g in graded for c in g.checks}, key=_part_order)
    mistakes, trouble, rates = diagnosed_mistakes(graded), incidents(graded), pass_rates(graded)
    kinds = {kind: sorted({i.student for i in trouble if i.kind == kind}) for kind in TROUBLE_KINDS}
    top = max((g.max_score for g in scored), default=0.0)
    totals = [g.total for g in scored if g.max_score == top]
    left_out = [p for p in parts if any(p in g.uncounted_parts() for g in scored)]
    out = ["<!doctype html><html lang='en'><meta charset='utf-8'>",
           "<meta name='viewport' content='width=device-width,initial-scale=1'>",
           "<title>Class report</title>", f"<style>{STYLE}{SIMILARITY_STYLE if similar is not None else ''}</style>",
           "<main>", "<h1>Class report</h1>"]
    lead = (f"{len(graded)} submission{'s' if len(graded) != 1 else ''}"
            + (f" ({len(kept & {g.id for g in graded})} kept from an earlier run)" if kept else "")
            + f", parts {', '.join(parts) or 'none'}; written {time.strftime('%Y-%m-%d %H:%M')}. ")
    if totals:
        without = f" (without {', '.join(left_out)}: reported apart, not counted)" if left_out else ""
        lead += (f"Mean total{without} {statistics.fmean(totals):.3g} of {top:g}, median "
                 f"{statistics.median(totals):.3g}; {sum(t == top for t in totals)} with full marks. ")
    said = []
    for label, ids in zip((TROUBLE_LABELS[0].capitalize(), *TROUBLE_LABELS[1:]), kinds.values()):
        named = f" ({', '.join(ids[:12])}{', …' if len(ids) > 12 else ''})" if ids else ""
        said.append(f"{label}: {len(ids)}{named}")
    lead += "; ".join(said) + "."
    out.append(f"<p class='lead'>{esc(lead)} Scores per student: <a href='grades.csv'>grades.csv</a>; "
               "each student's id links to their feedback page.</p>")
    out.append("<nav><a href='#scores'>Scores</a><a href='#checks'>Checks</a><a href='#mistakes'>Mistakes</a>"
               "<a href='#items'>Items</a>"
               f"<a href='#trouble'>{TROUBLE_TITLE}</a><a href='#tampering'>Tampering</a>" + ("<a href='#similar'>Unusually alike</a>" if similar is not None else "")
               + ("<a href='#intake'>Who handed in what</a>" if notes else "") + "<a href='#time'>Grading time</a></nav>")

    out.append("<h2 id='scores'>How the scores are spread</h2>")
    if kinds["grader error"]:
        out.append(f"<p class='muted'>Left out: {len(kinds['grader error'])} submission(s) we could not grade "
                   "(below).</p>")
    hists = []
    if len(parts) > 1 and totals:
        hists.append(histogram(totals, top, "Total"))
    for part in parts:
        maxima = [g.part_scores()[part][1] for g in scored if part in g.part_scores()]
        most = max(maxima, default=0.0)
        scores = [g.part_scores()[part][0] for g in scored if g.part_scores().get(part, (0, -1))[1] == most]
        hists.append(histogram(scores, most, f"{part} (not counted)" if part in left_out else part))
    out.append(f"<div class='hists'>{''.join(hists)}</div>" if hists else "<p>No scores.</p>")

    out.append("<h2 id='checks'>Checks, the most failed first</h2>")
    failed, all_passed = [r for r in rates if r.passed < r.graded], [r for r in rates if r.passed == r.graded]
    head = "<tr><th>part</th><th>check</th><th>points</th><th>passed</th></tr>"
    if failed:
        out.append(f"<table id='check-rates'>{head}{''.join(map(_rate_row, failed))}</table>")
    if all_passed:
        out.append(f"<details{'' if failed else ' open'}><summary>{len(all_passed)} check(s) every submission "
                   f"passed</summary><table>{head}{''.join(map(_rate_row, all_passed))}</table></details>")
    if not rates:
        out.append("<p>No checks ran.</p>")

    out.append("<h2 id='mistakes'>Diagnosed mistakes, the most common first</h2>")
    out.append("<p class='muted'>The graders' \"Likely mistake\" diagnoses of failed checks, each counted once "
               "per student (a mistake that fails several checks still counts once).</p>")
    if mistakes:
        out.append("<table id='mistakes-table'><tr><th>students</th><th>part</th><th>likely mistake</th>"
                   "<th>who</th><th>in the checks</th></tr>")
        for m in mistakes:
            out.append(f"<tr class='mistake' data-part='{esc(m.part)}' data-hint='{esc(m.hint)}' "
                       f"data-students='{esc(' '.join(m.students))}'><td class='n'>{len(m.students)}</td>"
                       f"<td>{esc(m.part)}</td><td class='hint'>{esc(m.hint)}</td>"
                       f"<td>{', '.join(_student(s) for s in m.students)}</td>"
                       f"<td class='muted small'>{esc('; '.join(m.checks[:4]))}{' …' if len(m.checks) > 4 else ''}"
                       "</td></tr>")
        out.append("</table>")
    else:
        out.append("<p>None diagnosed.</p>")
    out.append(_not_attempted_html(graded))
    out.append(items_section(graded, {p: PART_COLORS[k % len(PART_COLORS)] for k, p in enumerate(parts)}))

    out.append(f"<h2 id='trouble'>{TROUBLE_TITLE}</h2>")
    if trouble:
        out.append("<table id='incidents'><tr><th>student</th><th>what happened</th><th>in the checks</th>"
                   "<th>the first message</th></tr>")
        for i in trouble:
            checks = "; ".join(i.checks[:3]) + (f" and {len(i.checks) - 3} more" if len(i.checks) > 3 else "")
            out.append(f"<tr class='incident' data-student='{esc(i.student)}' data-kind='{esc(i.kind)}'>"
                       f"<td>{_student(i.student)}</td><td>{esc(i.kind)}</td><td>{esc(checks) or '—'}</td>"
                       f"<td class='muted'>{esc(i.message[:300])}</td></tr>")
        out.append("</table>")
    else:
        out.append("<p>None: every submission's code finished in time, and every one was graded.</p>")
    problems = [g for g in graded if g.status is Status.PROBLEMS]
    if problems:
        out.append("<details><summary>Graded with notes about their files "
                   f"({len(problems)})</summary><table><tr><th>student</th><th>note</th></tr>")
        out += [f"<tr><td>{_student(g.id)}</td><td>{esc('; '.join(g.problems)[:400])}</td></tr>" for g in problems]
        out.append("</table></details>")

    if notes:
        out.append("<h2 id='intake'>Who handed in what</h2><p class='muted'>What the paths given to the grader "
                   "held, as their names say: every entry is a student's row or one of these notes.</p>"
                   "<ul id='intake-notes'>" + "".join(f"<li>{esc(note)}</li>" for note in notes) + "</ul>")
    out.append(_tampering(graded))
    if similar is not None:
        out.append(similar.html())
    out.append(_grading_time(graded, parts, kept))
    out.append("</main>")
    return "\n".join(out) + "\n"


def _tampering(graded: list[GradedSubmission]) -> str:
    """Who tried what, the most attempts first; a column per kind that occurs."""
    out = ["<h2 id='tampering'>Tampering attempts</h2>",
           "<p class='muted'>What a submission tried that an honest one never does, counted by the grader from "
           "the code it read and the messages it received, never from what a submission says of itself. "
           "A signal for a person to look into: it changes no score.</p>"]
    tried = sorted((g for g in graded if g.tampering.total), key=lambda g: (-g.tampering.total, g.id))
    if not tried:
        return "\n".join(out + ["<p>None: no submission's code tried any of these: "
                                 + esc("; ".join(TAMPERING_KINDS.values())) + ".</p>"])
    kinds = [k for k in TAMPERING_KINDS if any(g.tampering.counts.get(k) for g in tried)]
    head = "".join(f"<th title='{esc(TAMPERING_KINDS[k])}'>{esc(k)}</th>" for k in kinds)
    out.append(f"<table id='tampering-table'><tr><th>student</th><th>attempts</th>{head}<th>what was seen</th></tr>")
    for g in tried:
        cells = "".join(f"<td class='n'>{g.tampering.counts.get(k, 0) or ''}</td>" for k in kinds)
        seen = "".join(f"<li>{esc(e)}</li>" for e in g.tampering.examples)
        out.append(f"<tr class='tampering' data-student='{esc(g.id)}' data-total='{g.tampering.total}'>"
                   f"<td>{_student(g.id)}</td><td class='n'>{g.tampering.total}</td>{cells}"
                   f"<td class='small'><details><summary>{len(g.tampering.examples)} shown</summary><ul>{seen}</ul>"
                   "</details></td></tr>")
    out.append("</table>")
    out.append("<p class='muted small'>" + "; ".join(f"<b>{esc(k)}</b>: {esc(TAMPERING_KINDS[k])}" for k in kinds)
               + ".</p>")
    return "\n".join(out)


def _grading_time(graded: list[GradedSubmission], parts: list[str], kept: set[str] | frozenset[str]) -> str:
    out = ["<h2 id='time'>Grading time per submission</h2>"]
    seconds = [g.seconds for g in graded]
    if not graded:
        return out[0] + "<p>No submissions.</p>"
    top = max(seconds) or 1.0
    out.append(f"<p>Each submission's own grading time: {fmt_seconds(statistics.fmean(seconds))} on average, "
               f"the slowest {fmt_seconds(top)}; submissions are graded side by side, so these overlap (the run's "
               f"wall time, start-up included, is in its last line)"
               + (" (times of kept submissions are those of the run that graded them)" if kept else "") + ".</p>")
    out.append(f"<div class='hists'>{histogram(seconds, top, 'Seconds per submission', 'seconds')}</div>")
    colors = {p: PART_COLORS[k % len(PART_COLORS)] for k, p in enumerate(parts)}
    out.append("<p class='key'>" + "".join(f"<span style='background:{c}'></span>{esc(p)}" for p, c in colors.items())
               + "</p>")
    rows = []
    for g in sorted(graded, key=lambda g: -g.seconds):
        stack = "".join(f"<span title='{esc(p)}: {g.part_seconds[p]:.2f} s' style='background:{colors.get(p, '#999')};"
                        f"width:{100 * g.part_seconds[p] / top:.1f}%'></span>" for p in parts if g.part_seconds.get(p))
        split = ", ".join(f"{p} {g.part_seconds[p]:.2f}" for p in parts if p in g.part_seconds)
        rows.append(f"<tr class='timing' data-student='{esc(g.id)}' data-seconds='{g.seconds:.3f}'>"
                    f"<td>{_student(g.id)}</td><td class='n'>{g.seconds:.2f} s</td><td><span class='stack'>{stack}"
                    f"</span></td><td class='muted'>{esc(split)}</td></tr>")
    head = "<tr><th>student</th><th>seconds</th><th>by part</th><th>seconds by part</th></tr>"
    out.append(f"<table id='timings'>{head}{''.join(rows[:SLOWEST_SHOWN])}</table>")
    if len(rows) > SLOWEST_SHOWN:
        out.append(f"<details><summary>The other {len(rows) - SLOWEST_SHOWN} submissions</summary>"
                   f"<table>{head}{''.join(rows[SLOWEST_SHOWN:])}</table></details>")
    return "\n".join(out)
