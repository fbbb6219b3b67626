"""service/policy.py: what a student may see, a pure function of the result, the policy and the time."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from autograder.api import CheckResult, Counting, GradedSubmission
from autograder.service.config import Policy
from autograder.service.policy import Seen, instructor_view, limit_message, period_end, period_start, student_view

DUE = datetime(2026, 12, 20, 23, 59, tzinfo=timezone.utc)
BEFORE = datetime(2026, 12, 10, 12, 0, tzinfo=timezone.utc)
AFTER = datetime(2026, 12, 21, 12, 0, tzinfo=timezone.utc)
HIDDEN_INPUT = "expected 0.7311 at [3, 1], got 0.5"


def result() -> GradedSubmission:
    return GradedSubmission("s1", [CheckResult("masks", "causal_mask: values", 2, True),
                                   CheckResult("scaling", "scores: q k / sqrt d", 3, False, [HIDDEN_INPUT],
                                               hint="divide by sqrt(d), not d"),
                                   CheckResult("quiz", "question 1", 1, False, ["the right answer is B"])],
                            counting=Counting(held_back=frozenset({"quiz"})))


def seen(submitted=BEFORE, state="graded") -> Seen:
    return Seen(1, "alice", submitted, state, "", result() if state == "graded" else None)


def test_received_shows_no_score_and_no_checks():
    entry = student_view(seen(), Policy(due=DUE, before_due="received"), BEFORE)
    assert set(entry) == {"id", "submitted", "state", "message", "late"}
    assert entry["state"] == "graded" and entry["late"] is False


def test_checks_show_which_pass_without_the_hidden_inputs():
    entry = student_view(seen(), Policy(due=DUE, before_due="checks"), BEFORE)
    assert [(c["name"], c["passed"]) for c in entry["checks"]] == [("causal_mask: values", True),
                                                                   ("scores: q k / sqrt d", False)]
    assert HIDDEN_INPUT not in repr(entry) and "hint" not in repr(entry) and "output" not in repr(entry)
    assert (entry["score"], entry["out_of"]) == (2, 5)  # the held-back quiz is not in it before the due date
    assert "quiz" in entry["message"]


def test_all_shows_the_feedback_and_after_the_due_date_the_quiz():
    policy = Policy(due=DUE, before_due="checks", after_due="all")
    entry = student_view(seen(), policy, AFTER)
    assert HIDDEN_INPUT in repr(entry) and "divide by sqrt(d)" in repr(entry)
    assert (entry["score"], entry["out_of"]) == (2, 6)
    assert [c["part"] for c in entry["checks"]] == ["masks", "scaling", "quiz"]


def test_no_due_date_is_always_before():
    entry = student_view(seen(), Policy(before_due="received", after_due="all"), AFTER)
    assert "score" not in entry and "late" not in entry


def test_a_submission_after_the_due_date_is_late():
    assert student_view(seen(submitted=AFTER), Policy(due=DUE), AFTER)["late"] is True


@pytest.mark.parametrize("state", ["queued", "waiting", "grading", "refused", "failed"])
def test_only_a_graded_submission_has_a_score(state):
    entry = student_view(seen(state=state), Policy(before_due="all"), BEFORE)
    assert "score" not in entry and "checks" not in entry


def test_the_staff_see_the_whole_score():
    entry = instructor_view(seen())
    assert (entry["score"], entry["out_of"], entry["student"]) == (2, 6, "alice")


@pytest.mark.parametrize("counts", [True, False])
def test_the_student_sees_the_total_every_other_place_shows(counts):
    graded = result()
    graded.counting = Counting.of_quiz(counts)
    before = student_view(Seen(1, "alice", BEFORE, "graded", "", graded), Policy(due=DUE, before_due="all"), BEFORE)
    after = student_view(Seen(1, "alice", BEFORE, "graded", "", graded), Policy(due=DUE, after_due="all"), AFTER)
    # Gradescope's summary says the same before the due date; after it, the CSV's and the gradebook's total
    assert graded.summary_lines()[0].startswith(f"Total: {before['score']:g} / {before['out_of']:g}")
    assert (after["score"], after["out_of"]) == (graded.total, graded.max_score) == ((2, 6) if counts else (2, 5))


@pytest.mark.parametrize("period, start, end", [
    ("hour", datetime(2026, 12, 10, 12, tzinfo=timezone.utc), datetime(2026, 12, 10, 13, tzinfo=timezone.utc)),
    ("day", datetime(2026, 12, 10, tzinfo=timezone.utc), datetime(2026, 12, 11, tzinfo=timezone.utc)),
    ("week", datetime(2026, 12, 7, tzinfo=timezone.utc), datetime(2026, 12, 14, tzinfo=timezone.utc)),
])
def test_periods_are_calendar_periods_in_utc(period, start, end):
    now = datetime(2026, 12, 10, 12, 30, tzinfo=timezone.utc)  # a Thursday
    assert (period_start(period, now), period_end(period, now)) == (start, end)
    assert period_end("total", now) is None


def test_the_limit_message_says_what_happens_and_when():
    now = datetime(2026, 12, 10, 12, 30, tzinfo=timezone.utc)
    waits = limit_message(Policy(attempts=3, period="day", over_limit="wait"), now)
    assert "3 graded attempts per day" in waits and "waits" in waits and "2026-12-11T00:00:00+00:00" in waits
    refused = limit_message(Policy(attempts=1, period="total", over_limit="refuse"), now)
    assert "1 graded attempt in all" in refused and "not graded" in refused and "last graded" in refused
