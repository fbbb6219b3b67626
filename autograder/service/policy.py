"""The instructor's policy as pure functions of the time: how many graded attempts a student has left, and what a
student may see of a submission (Gradescope's visibility settings, before and after the due date).

What a student sees is one of three views (service.toml's `before_due` and `after_due`):

* "all": the score and every check with its feedback (what was checked, expected against got, the hint);
* "checks": the score and which checks pass, without the feedback, which holds the hidden inputs;
* "received": only that the submission arrived, when, and its state.

In every view a part the run holds back until the due date (a counted quiz: `Counting.held_back`, whose
score a student could otherwise learn answer by answer from resubmissions) is left out before it, with its
points, as the package's Gradescope results do. A submission after the due date is marked late; the marks
the gradebook keeps follow nbgrader's own late-submission policy when the instructor collects and grades.
Nothing here reads a clock: `now` is always given.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ..api import GradedSubmission
from .config import Policy

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def period_start(period: str, now: datetime) -> datetime:
    """The start of the period `now` is in, in UTC: its hour, its day, its ISO week (from Monday), or all time."""
    now = now.astimezone(timezone.utc)
    if period == "hour":
        return now.replace(minute=0, second=0, microsecond=0)
    if period == "day":
        return now.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "week":
        return (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    return EPOCH


def period_end(period: str, now: datetime) -> datetime | None:
    """When the next period starts (None for "total": never)."""
    start = period_start(period, now)
    step = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(weeks=1)}.get(period)
    return None if step is None else start + step


def over_limit(policy: Policy, used: int) -> bool:
    """Whether a student who has had `used` graded attempts this period may have no more."""
    return policy.attempts > 0 and used >= policy.attempts


def limit_message(policy: Policy, now: datetime) -> str:
    """What a student over the limit is told: why this submission is not graded now, and when it may be."""
    per = "in all" if policy.period == "total" else f"per {policy.period}"
    used = f"You have used your {policy.attempts} graded attempt{'s' if policy.attempts != 1 else ''} {per}."
    end = period_end(policy.period, now)
    if policy.over_limit == "wait" and end is not None:
        return f"{used} This submission waits, and is graded from {_when(end)}."
    return (f"{used} This submission is received but not graded"
            + (f"; submit again from {_when(end)} to have it graded." if end is not None else ".")
            + " Your last graded submission stands.")


def view_name(policy: Policy, now: datetime) -> str:
    """The view students get at `now`: `after_due` once the due date has passed, else `before_due`."""
    return policy.after_due if policy.due is not None and now >= policy.due else policy.before_due


def before_due(policy: Policy, now: datetime) -> bool:
    return policy.due is None or now < policy.due


@dataclass(frozen=True)
class Seen:
    """One submission as the queue holds it, for the views: what it is, not how it is stored."""

    id: int
    student: str
    submitted: datetime
    state: str
    message: str = ""
    result: GradedSubmission | None = None
    verified: bool = True


def student_view(seen: Seen, policy: Policy, now: datetime) -> dict[str, Any]:
    """What the student may see of `seen` at `now` (api/mine's entry, the feedback page): the fields the policy
    hides are absent, never empty."""
    view = view_name(policy, now)
    entry: dict[str, Any] = {"id": seen.id, "submitted": _when(seen.submitted), "state": seen.state,
                             "message": seen.message}
    if policy.due is not None:
        entry["late"] = seen.submitted > policy.due
    result = seen.result
    if view == "received" or result is None or seen.state != "graded":
        return entry
    held = result.held_parts() if before_due(policy, now) else []
    entry["score"], entry["out_of"] = result.score_leaving_out(held)
    if held:
        entry["message"] = " ".join(filter(None, [seen.message, f"The {', '.join(sorted(held))} is marked after the "
                                                                 "due date and is not in this score."]))
    checks = []
    for c in result.checks:
        if c.part in held:
            continue
        check: dict[str, Any] = {"part": c.part, "name": c.name, "passed": c.passed, "score": c.score,
                                 "max_score": c.max_score, "counted": result.counting.counts(c.part)}
        if view == "all":
            check["output"] = "\n\n".join(c.outputs)
            if c.hint:
                check["hint"] = c.hint
        checks.append(check)
    entry["checks"] = checks
    if view == "all" and result.problems:
        entry["problems"] = list(result.problems)
    return entry


def instructor_view(seen: Seen) -> dict[str, Any]:
    """What the course's staff see of `seen`: everything but the checks' outputs (in the student's feedback)."""
    entry: dict[str, Any] = {"id": seen.id, "student": seen.student, "verified": seen.verified,
                             "submitted": _when(seen.submitted), "state": seen.state, "message": seen.message}
    if seen.result is not None:
        entry["status"] = seen.result.status_text()
        if seen.state == "graded":
            entry["score"] = seen.result.total
            entry["out_of"] = seen.result.max_score
            entry["checks"] = [{"part": c.part, "name": c.name, "passed": c.passed, "score": c.score,
                                "max_score": c.max_score} for c in seen.result.checks]
    return entry


def _when(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")
