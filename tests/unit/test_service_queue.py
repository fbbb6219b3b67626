"""service/queue.py: each submission recorded once, graded once, fairly, within the attempts limit, and a stop
loses nothing. The queue alone, no grading: its rows are finished with made-up results."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from autograder.api import CheckResult, GradedSubmission
from autograder.service.config import Policy
from autograder.service.exchange import Found
from autograder.service.queue import MAX_DEATHS, Queue

T0 = datetime(2026, 12, 10, 9, 0, tzinfo=timezone.utc)
NOW = datetime(2026, 12, 10, 12, 0, tzinfo=timezone.utc)


def found(student: str, minute: int, refused: str = "") -> Found:
    at = T0 + timedelta(minutes=minute)
    return Found(f"{student}+attention+{at:%Y-%m-%d %H:%M:%S}.000000 UTC", student, at, student, True, refused)


def done(row_id: int) -> GradedSubmission:
    return GradedSubmission(f"s{row_id}", [CheckResult("masks", "a check", 1, True)])


def test_a_folder_is_recorded_once(tmp_path):
    queue = Queue(tmp_path)
    assert queue.record([found("alice", 0), found("bob", 1)], NOW) == 2
    assert queue.record([found("alice", 0), found("carol", 2)], NOW) == 1
    assert [r.student for r in queue.rows()] == ["alice", "bob", "carol"]
    assert {r.state for r in queue.rows()} == {"queued"}


def test_a_flood_from_one_student_does_not_delay_another(tmp_path):
    queue = Queue(tmp_path)
    queue.record([found("alice", m) for m in range(10)] + [found("bob", 5)], NOW)
    first = queue.next_batch(Policy(), NOW, size=4)
    assert [r.student for r in first] == ["alice", "bob"]  # at most one each, oldest first
    assert first[0].submitted == T0
    for row in first:
        assert queue.finish(row.id, done(row.id), NOW)
    second = queue.next_batch(Policy(), NOW, size=4)
    assert [r.student for r in second] == ["alice"] and second[0].submitted == T0 + timedelta(minutes=1)


def test_a_student_being_graded_gets_no_second_batch(tmp_path):
    """Batches graded at once: the students of the batches in flight are excluded from the next, so a student
    with ten queued submissions never has two being graded."""
    queue = Queue(tmp_path)
    queue.record([found("alice", m) for m in range(10)] + [found("bob", 5), found("carol", 6)], NOW)
    first = queue.next_batch(Policy(), NOW, size=1)
    assert [r.student for r in first] == ["alice"]
    second = queue.next_batch(Policy(), NOW, size=4, exclude={"alice"})
    assert [r.student for r in second] == ["bob", "carol"]
    assert queue.next_batch(Policy(), NOW, size=4, exclude={"alice", "bob", "carol"}) == []
    in_flight = [r for r in queue.rows() if r.state == "grading"]
    assert sorted(r.student for r in in_flight) == ["alice", "bob", "carol"]
    # the batch of bob and carol died: their rows, left 'grading', are taken again; alice's, in flight, is not
    assert [r.id for r in queue.next_batch(Policy(), NOW, size=4, exclude={"alice"})] == [r.id for r in second]


def test_a_row_whose_batch_dies_is_taken_again_then_failed(tmp_path):
    queue = Queue(tmp_path)
    queue.record([found("alice", 0)], NOW)
    for _death in range(1, MAX_DEATHS):
        (row,) = queue.next_batch(Policy(), NOW, size=4)
        assert queue.died([row.id], NOW) == [] and queue.row(row.id).state == "grading"
    (row,) = queue.next_batch(Policy(), NOW, size=4)
    assert queue.died([row.id], NOW) == [row.id]
    failed = queue.row(row.id)
    assert failed.state == "failed" and f"stopped {MAX_DEATHS} times" in failed.message
    assert queue.next_batch(Policy(), NOW, size=4) == []


def test_a_state_from_before_deaths_were_counted_is_upgraded(tmp_path):
    import sqlite3

    queue = Queue(tmp_path)
    queue.record([found("alice", 0)], NOW)
    with sqlite3.connect(queue.path) as db:
        db.execute("ALTER TABLE submissions DROP COLUMN deaths")
    (row,) = Queue(tmp_path).next_batch(Policy(), NOW, size=4)
    assert Queue(tmp_path).died([row.id], NOW) == []


def test_a_row_left_grading_is_graded_again_and_stored_once(tmp_path):
    queue = Queue(tmp_path)
    queue.record([found("alice", 0), found("bob", 1)], NOW)
    taken = queue.next_batch(Policy(), NOW, size=4)
    assert {r.state for r in taken} == {"grading"}
    restarted = Queue(tmp_path)  # the service stopped while grading; nothing was stored
    again = restarted.next_batch(Policy(), NOW, size=4)
    assert [r.id for r in again] == [r.id for r in taken]
    assert restarted.finish(again[0].id, done(again[0].id), NOW)
    assert not restarted.finish(again[0].id, done(again[0].id), NOW)  # a second result is never stored
    assert restarted.row(again[0].id).state == "graded"
    assert [r.id for r in restarted.next_batch(Policy(), NOW, size=4)] == [again[1].id]
    restarted.finish(again[1].id, done(again[1].id), NOW)
    assert restarted.next_batch(Policy(), NOW, size=4) == []


def test_an_attempt_over_the_limit_waits_for_the_next_period(tmp_path):
    queue = Queue(tmp_path)
    policy = Policy(attempts=1, period="day", over_limit="wait")
    queue.record([found("alice", 0), found("alice", 1)], NOW)
    (first,) = queue.next_batch(policy, NOW, size=4)
    queue.finish(first.id, done(first.id), NOW)
    assert queue.next_batch(policy, NOW, size=4) == []
    waiting = queue.rows()[1]
    assert waiting.state == "waiting" and "1 graded attempt per day" in waiting.message
    tomorrow = NOW + timedelta(days=1)
    (graded,) = queue.next_batch(policy, tomorrow, size=4)
    assert graded.id == waiting.id and graded.state == "grading"


def test_an_attempt_over_the_limit_is_refused_with_a_message(tmp_path):
    queue = Queue(tmp_path)
    policy = Policy(attempts=1, period="day", over_limit="refuse")
    queue.record([found("alice", 0), found("alice", 1), found("alice", 2), found("bob", 3)], NOW)
    taken = queue.next_batch(policy, NOW, size=4)
    assert [r.student for r in taken] == ["alice", "bob"]
    for row in taken:
        queue.finish(row.id, done(row.id), NOW)
    assert queue.next_batch(policy, NOW, size=4) == []
    refused = [r for r in queue.rows() if r.state == "refused"]
    assert len(refused) == 2 and all("not graded" in r.message for r in refused)
    assert queue.next_batch(policy, NOW + timedelta(days=1), size=4) == []  # refused stays refused


def test_a_refused_folder_is_recorded_and_never_taken(tmp_path):
    queue = Queue(tmp_path)
    queue.record([found("bob", 0, refused="named for bob but made by mallory")], NOW)
    (row,) = queue.rows()
    assert row.state == "refused" and row.impostor and "mallory" in row.message
    assert queue.next_batch(Policy(), NOW, size=4) == []


def test_a_failed_grade_is_failed(tmp_path):
    queue = Queue(tmp_path)
    queue.record([found("alice", 0)], NOW)
    (row,) = queue.next_batch(Policy(), NOW, size=4)
    queue.finish(row.id, GradedSubmission(f"s{row.id}", error="the grader broke"), NOW)
    assert queue.row(row.id).state == "failed" and queue.row(row.id).result.error == "the grader broke"


def test_feedback_is_due_once_per_view_and_state_and_never_for_an_impostor(tmp_path):
    queue = Queue(tmp_path)
    queue.record([found("alice", 0), found("bob", 1, refused="named for bob but made by mallory")], NOW)
    assert queue.unshown("checks") == []  # nothing graded yet; the impostor's folder gets none
    (row,) = queue.next_batch(Policy(), NOW, size=4)
    queue.finish(row.id, done(row.id), NOW)
    assert [r.id for r in queue.unshown("checks")] == [row.id]
    queue.mark_shown(row.id, "checks/graded")
    assert queue.unshown("checks") == []
    assert [r.id for r in queue.unshown("all")] == [row.id]  # the due date passed: written again


def test_a_failed_grade_gives_the_attempt_back(tmp_path):
    queue = Queue(tmp_path)
    policy = Policy(attempts=1, period="day", over_limit="wait")
    queue.record([found("alice", 0), found("alice", 1)], NOW)
    (first,) = queue.next_batch(policy, NOW, size=4)
    queue.finish(first.id, GradedSubmission(f"s{first.id}", error="the grader broke"), NOW)
    (second,) = queue.next_batch(policy, NOW, size=4)
    assert second.id != first.id and second.state == "grading"


def test_the_students_waiting_are_counted_without_those_in_flight(tmp_path):
    queue = Queue(tmp_path)
    queue.record([found("alice", m) for m in range(3)] + [found("bob", 5), found("carol", 6)], NOW)
    assert queue.waiting_students() == 3
    (row,) = queue.next_batch(Policy(), NOW, size=1)
    assert queue.waiting_students(exclude={"alice"}) == 2 and queue.waiting_students() == 3
