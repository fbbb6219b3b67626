"""Past Gradescope's submission limit (`gradescope --max-submissions N`), an upload is not graded: the last
graded upload's score and its detailed feedback (each check, as Gradescope stored its results.json in
submission_metadata.json's previous_submissions) stand, with a note on top."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from autograder import gradescope

LIMIT = 2


def results(score: float, failed: str) -> dict:
    """A graded upload's results.json, as `gradescope --run` writes it (the fields Gradescope documents)."""
    return {"score": score, "output": f"Total: {score:g} / 105", "stdout_visibility": "hidden",
            "visibility": "visible", "execution_time": 41.5,
            "tests": [{"name": "masks/causal_mask: shape", "score": 2.0, "max_score": 2.0, "status": "passed",
                       "output": "", "visibility": "visible"},
                      {"name": failed, "score": 0.0, "max_score": 3.0, "status": "failed",
                       "output": f"{failed}: expected 0.25, got 0.5 (likely mistake: scaled by d, not sqrt(d))",
                       "visibility": "visible"}]}


def upload_past_the_limit(tmp_path: Path, previous: list[dict]) -> dict:
    """run_autograder's `gradescope --run ROOT` for an upload with `previous` earlier ones: its results.json."""
    root = tmp_path / f"root{len(list(tmp_path.iterdir()))}"
    (root / "source").mkdir(parents=True)
    settings = gradescope.Settings(max_submissions=LIMIT)
    (root / "source" / gradescope.CONFIG_FILE).write_text(json.dumps(asdict(settings)))
    (root / "submission_metadata.json").write_text(json.dumps({"id": 7, "previous_submissions": previous}))
    assert gradescope.run(root) == 0  # no grading started: nothing in root/submission to grade
    return json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))


def test_the_last_uploads_score_and_feedback_stand_with_a_note(tmp_path):
    older = {"submission_time": "2026-03-01T10:00:00.000000-08:00", "score": 60.0,
             "results": results(60.0, "scaling/attention_scores: values")}
    newer = {"submission_time": "2026-03-01T19:30:00.000000+01:00", "score": 90.0,  # later: 18:30 UTC vs 18:00
             "results": results(90.0, "heads/split_heads: values")}
    for previous in ([older, newer], [newer, older]):  # in whichever order Gradescope lists them
        data = upload_past_the_limit(tmp_path, previous)
        assert gradescope.check_results(data) == []
        assert data["score"] == 90.0
        assert data["tests"] == newer["results"]["tests"]  # each check's feedback, as it was
        assert data["output"].startswith(f"You have used all {LIMIT} submissions allowed for this assignment: "
                                         "this upload was not graded, and your last score (90.0) stands, with its "
                                         "feedback below.\n\nTotal: 90 / 105")
        assert data["visibility"] == "visible" and data["execution_time"] == 41.5


def test_a_second_upload_past_the_limit_keeps_the_same_feedback_and_one_note(tmp_path):
    graded = {"submission_time": "2026-03-01T10:00:00-08:00", "score": 75.0,
              "results": results(75.0, "masks/padding_mask: values")}
    first = upload_past_the_limit(tmp_path, [graded, dict(graded, submission_time="2026-03-01T11:00:00-08:00")])
    refused = {"submission_time": "2026-03-01T12:00:00-08:00", "score": 75.0, "results": first}
    again = upload_past_the_limit(tmp_path, [graded, graded, refused])
    assert again["tests"] == graded["results"]["tests"] and again["score"] == 75.0
    assert again["output"].count("You have used all") == 1, again["output"]
    assert again["output"].endswith("\n\nTotal: 75 / 105")


def test_without_times_the_listed_order_decides_and_without_results_the_score_stands(tmp_path):
    listed = [{"score": 10.0, "results": results(10.0, "a/b")}, {"score": 20.0, "results": results(20.0, "c/d")}]
    assert upload_past_the_limit(tmp_path, listed)["tests"] == listed[1]["results"]["tests"]
    bare = upload_past_the_limit(tmp_path, [{"score": 5.0}, {"score": 30.0}])
    assert bare["score"] == 30.0 and bare["tests"] == [] and gradescope.check_results(bare) == []
    assert bare["output"].endswith("your last score (30.0) stands.")
