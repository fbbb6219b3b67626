"""The service's HTML: a student's submissions (their page, and each nbgrader feedback file) and the class (the
staff's page), from the views policy.py decides. Plain, accessible HTML (headings, captioned tables, no script);
every text that came from a submission, a name or the grader is escaped here, once, where it is written.
"""

from __future__ import annotations

from html import escape
from typing import Any

STYLE = ("body{font-family:sans-serif;max-width:60rem;margin:1rem auto;padding:0 1rem;line-height:1.4}"
         "table{border-collapse:collapse}th,td{border:1px solid #888;padding:.25rem .5rem;text-align:left}"
         "pre{white-space:pre-wrap;background:#f4f4f4;padding:.5rem}")
STATE_WORDS = {"queued": "queued", "waiting": "waiting (over the attempts limit)", "grading": "being graded",
               "graded": "graded", "refused": "refused", "failed": "could not be graded"}


def page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n<style>{STYLE}</style>\n</head>\n'
            f"<body>\n<main>\n<h1>{escape(title)}</h1>\n{body}</main>\n</body>\n</html>\n")


def submission(entry: dict[str, Any], heading: str = "h2") -> str:
    """One submission as the student may see it (`policy.student_view`)."""
    parts = [f"<section>\n<{heading}>Submitted {escape(entry['submitted'])}</{heading}>\n<dl>\n"
             f"<dt>State</dt><dd>{escape(STATE_WORDS.get(entry['state'], entry['state']))}</dd>\n"]
    if entry.get("late"):
        parts.append("<dt>Late</dt><dd>submitted after the due date</dd>\n")
    if "score" in entry:
        parts.append(f"<dt>Score</dt><dd>{_number(entry['score'])} / {_number(entry['out_of'])}</dd>\n")
    parts.append("</dl>\n")
    if entry.get("message"):
        parts.append(f"<p>{escape(entry['message'])}</p>\n")
    for problem in entry.get("problems", []):
        parts.append(f"<p>Note: {escape(problem)}</p>\n")
    checks = entry.get("checks")
    if checks:
        parts.append('<table>\n<caption>Checks</caption>\n<thead><tr><th scope="col">Check</th>'
                     '<th scope="col">Result</th><th scope="col">Points</th></tr></thead>\n<tbody>\n')
        for c in checks:
            result = "passed" if c["passed"] else "failed"
            counted = "" if c.get("counted", True) else " (not counted)"
            parts.append(f"<tr><td>{escape(c['part'])}: {escape(c['name'])}</td><td>{result}</td>"
                         f"<td>{_number(c['score'])} / {_number(c['max_score'])}{counted}</td></tr>\n")
        parts.append("</tbody>\n</table>\n")
        for c in checks:
            if not c["passed"] and (c.get("output") or c.get("hint")):
                parts.append(f"<h3>{escape(c['part'])}: {escape(c['name'])}</h3>\n")
                if c.get("output"):
                    parts.append(f"<pre>{escape(c['output'])}</pre>\n")
                if c.get("hint"):
                    parts.append(f"<p>Likely mistake: {escape(c['hint'])}</p>\n")
    parts.append("</section>\n")
    return "".join(parts)


def student_page(user: str, entries: list[dict[str, Any]], unverified: bool) -> str:
    body = [f"<p>Your submissions, {escape(user)}, newest first.</p>\n"]
    if unverified:
        body.append("<p>This course's submissions all belong to one account, so a submission is taken to be "
                    "whoever its name says.</p>\n")
    if not entries:
        body.append("<p>No submission yet: submit from the Assignments tab.</p>\n")
    body.extend(submission(e) for e in reversed(entries))
    return page("Your submissions", "".join(body))


def feedback_page(assignment: str, entry: dict[str, Any]) -> str:
    """The nbgrader feedback file of one submission."""
    return page(f"Feedback on {assignment}", submission(entry))


def class_page(entries: list[dict[str, Any]], unverified: bool) -> str:
    """The staff's page: every submission, newest first, and a count of each state."""
    counts: dict[str, int] = {}
    for e in entries:
        counts[e["state"]] = counts.get(e["state"], 0) + 1
    body = ["<p>" + escape(", ".join(f"{n} {STATE_WORDS.get(s, s)}" for s, n in sorted(counts.items()))
                           or "No submission yet.") + "</p>\n"]
    if unverified:
        body.append("<p>Some submissions belong to a shared account: their student is the one their name says.</p>\n")
    body.append('<table>\n<caption>Submissions</caption>\n<thead><tr><th scope="col">Student</th>'
                '<th scope="col">Submitted</th><th scope="col">State</th><th scope="col">Score</th>'
                '<th scope="col">Notes</th></tr></thead>\n<tbody>\n')
    for e in reversed(entries):
        score = f"{_number(e['score'])} / {_number(e['out_of'])}" if "score" in e else ""
        notes = "; ".join(filter(None, [e.get("message", ""), e.get("status", "") if e["state"] != "graded" else "",
                                        "" if e.get("verified", True) else "name not verified"]))
        body.append(f"<tr><td>{escape(e['student'])}</td><td>{escape(e['submitted'])}</td>"
                    f"<td>{escape(STATE_WORDS.get(e['state'], e['state']))}</td><td>{score}</td>"
                    f"<td>{escape(notes)}</td></tr>\n")
    body.append("</tbody>\n</table>\n")
    return page("The class's submissions", "".join(body))


def _number(value: float) -> str:
    return escape(f"{value:g}")
