"""What a run keeps from an earlier one (pool/batch.py): a result it can reuse comes back whole, with what
the grader recorded for itself beside results.json."""

from __future__ import annotations

from autograder.pool.batch import earlier_result, fingerprint, write_record
from autograder.model.results import CheckResult, GradedSubmission
from autograder.model.submission import Submission
from autograder.reports import write_submission


def test_a_kept_result_keeps_its_quiz_answers_which_results_json_does_not_hold(tmp_path):
    submission = Submission("ada")
    graded = GradedSubmission("ada", [CheckResult("masks", "a", 1.0),
                                      CheckResult("quiz", "q01: why?", 1.0, False, ["wrong"], chosen="c", right="b")])
    parts = ("masks", "quiz")
    write_submission(graded, tmp_path)
    write_record(tmp_path, graded, fingerprint(submission, parts, "s"))
    assert "chosen" not in (tmp_path / "ada" / "results.json").read_text(encoding="utf-8")
    kept = earlier_result(tmp_path, submission, parts, fingerprint(submission, parts, "s"))
    assert kept is not None and [(c.chosen, c.right) for c in kept.checks] == [("", ""), ("c", "b")]
