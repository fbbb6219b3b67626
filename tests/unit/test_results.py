"""The results model: scores, statuses, and the same results back from JSON and from results.json."""

from __future__ import annotations

import json

from autograder.model.results import CheckResult, GradedSubmission, Status


def sample() -> GradedSubmission:
    return GradedSubmission("ada", [CheckResult("masks", "a", 2.0), CheckResult("masks", "b", 1.0, False, ["why"]),
                                    CheckResult("quiz", "q01", 1.0)], ["a note"], seconds=1.25)


def test_scores_by_part():
    graded = sample()
    assert graded.part_scores() == {"masks": (2.0, 3.0), "quiz": (1.0, 1.0)}
    assert (graded.total, graded.max_score) == (3.0, 4.0)
    assert [c.name for c in graded.checks_of("masks")] == ["a", "b"]


def test_status_says_what_went_wrong():
    assert GradedSubmission("x", [CheckResult("masks", "a", 1.0)]).status is Status.GRADED
    assert sample().status is Status.PROBLEMS and sample().status_text() == "graded with problems: a note"
    broken = GradedSubmission("x", [CheckResult("masks", "a", 1.0, False, ["boom"], internal_error=True)])
    assert broken.status is Status.GRADER_ERROR and broken.status_text() == "grader error: boom"
    assert GradedSubmission("x", error="worker died").status_text() == "grader error: worker died"


def test_json_round_trip():
    graded = sample()
    assert GradedSubmission.from_json(json.loads(json.dumps(graded.to_json()))) == graded


def test_gradescope_format_and_back():
    graded = sample()
    data = json.loads(json.dumps(graded.to_gradescope()))
    assert data["score"] == 3.0 and len(data["tests"]) == 3
    assert data["tests"][1] == {"name": "masks/b", "score": 0.0, "max_score": 1.0, "status": "failed",
                                "output": "why", "visibility": "visible"}
    back = GradedSubmission.from_gradescope(data)
    assert back == graded


def test_an_internal_error_survives_the_gradescope_round_trip():
    graded = GradedSubmission("x", [CheckResult("masks", "a", 1.0, False, ["boom"], internal_error=True)])
    assert GradedSubmission.from_gradescope(graded.to_gradescope()).status is Status.GRADER_ERROR


def answered() -> GradedSubmission:
    return GradedSubmission("ada", [CheckResult("masks", "a", 1.0), CheckResult("quiz", "q01: why?", 1.0, False,
                                                                                  ["wrong"], chosen="c", right="b"),
                                    CheckResult("quiz", "q02: how?", 1.0, False, ["none"], right="d")])


def test_a_quiz_answer_goes_to_the_reports_but_never_into_results_json():
    """The option chosen and the right one, as the key letters them, would tell a shuffled course's order and
    the key: they travel from the worker (to_json) and in the grader's record (answers), never in results.json."""
    graded = answered()
    assert GradedSubmission.from_json(json.loads(json.dumps(graded.to_json()))) == graded
    text = json.dumps(graded.to_gradescope())
    assert "chosen" not in text and "right" not in text
    back = GradedSubmission.from_gradescope(json.loads(text))
    assert [(c.chosen, c.right) for c in back.checks] == [("", "")] * 3
    back.restore_answers(json.loads(json.dumps(graded.answers())))
    assert back.checks == graded.checks


def test_an_answer_record_that_is_not_letters_of_the_options_is_left_out():
    graded = answered()
    assert graded.answers() == {"quiz/q01: why?": ["c", "b"], "quiz/q02: how?": ["", "d"]}
    fresh = GradedSubmission.from_gradescope(graded.to_gradescope())
    fresh.restore_answers({"quiz/q01: why?": ["=cmd()", "b"], "quiz/q02: how?": ["a", ""], "extra": "x"})
    assert [(c.chosen, c.right) for c in fresh.checks] == [("", "")] * 3
    fresh.restore_answers(["not", "a", "dict"])
    assert [(c.chosen, c.right) for c in fresh.checks] == [("", "")] * 3
