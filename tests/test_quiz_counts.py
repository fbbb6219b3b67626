"""Whether the quiz counts, as a user meets it: `python -m autograder grade` (issue 46, item 2).

* A self-check quiz (the committed release's, and the default of a course's nbgrader_config.py) is
  reported in its column and left out of the total in grades.csv and results.json; the run's first line
  says so.
* A counted quiz (a course whose nbgrader_config.py sets `c.QuizRelease.mode = "counted"`, or
  `--quiz-counts`) is in the total; on Gradescope nothing a student sees before the due date holds its
  score: two uploads that differ only in their quiz answers look the same until then.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import gradescope
from autograder.graders.quiz_key import ANSWERS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
BASE = (ROOT / "tests" / "corpus" / "base.py").read_text()


def wrong(letter: str) -> str:
    return "abcd"[("abcd".index(letter) + 1) % 4]


def grade(cwd: Path, answers: dict[str, dict[str, str]], *options: str) -> tuple[str, dict[str, dict], dict]:
    """(stderr, grades.csv's rows by id, results.json by id) of grading .py submissions (the reference's
    masks, then `answers`) in `cwd`, on the parts masks and quiz."""
    for sid, given in answers.items():
        (cwd / f"{sid}.py").write_text(BASE + "".join(f"answer_{q} = {a!r}\n" for q, a in given.items()))
    out = cwd / "out"
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *(f"{sid}.py" for sid in answers), "--out",
                          str(out), "--parts", "masks,quiz", "--secret", "s", "--jobs", "1", "--force", *options],
                         cwd=cwd, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {r["submission"]: r for r in csv.DictReader((out / "grades.csv").open())}
    return run.stderr, rows, {sid: json.loads((out / sid / "results.json").read_text()) for sid in answers}


def test_a_self_check_quiz_is_reported_and_not_counted_by_default(tmp_path):
    key = dict(ANSWERS)  # the committed release shows the options as written
    err, rows, results = grade(tmp_path, {"right": key, "wrong": {q: wrong(a) for q, a in key.items()}})
    assert err.splitlines()[1] == ("quiz: self-check, reported and not counted in the total (the mode of the "
                                   "grader's release; --quiz-counts counts it)")
    masks = float(rows["right"]["masks"])
    assert masks > 0 and rows["right"]["quiz"] == str(len(key)) and rows["wrong"]["quiz"] == "0"
    for sid in ("right", "wrong"):
        assert float(rows[sid]["total"]) == float(rows[sid]["max"]) == masks and rows[sid]["not_in_total"] == "quiz"
        assert results[sid]["score"] == masks
    assert f"quiz: {len(key)} / {len(key)} (self-check: not counted in the total)" in results["right"]["output"]


def test_a_counted_course_counts_the_quiz_and_shows_no_score_of_it_before_the_due_date(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text((ROOT / "nbgrader_config.py").read_text()
                                                + '\nc.QuizRelease.mode = "counted"\n')
    key = dict(ANSWERS)
    err, rows, results = grade(tmp_path, {"right": key, "wrong": {**key, "q03": wrong(key["q03"])}},
                               "--visibility", "visible")
    assert err.splitlines()[1] == ("quiz: counted, counted in the total (nbgrader_config.py: c.QuizRelease.mode = "
                                   "'counted'); on Gradescope its checks and score are shown only after the due date")
    masks = float(rows["right"]["masks"])
    assert float(rows["right"]["total"]) == masks + len(key) and float(rows["wrong"]["total"]) == masks + len(key) - 1
    assert rows["right"]["not_in_total"] == ""
    assert (results["right"]["score"], results["wrong"]["score"]) == (masks + len(key), masks + len(key) - 1)
    seen = {sid: gradescope.seen_before_due_date(data) for sid, data in results.items()}
    assert seen["right"] == seen["wrong"] and "score" not in seen["right"]
    assert "quiz: marked after the due date" in seen["right"]["output"]
    assert not any(t["name"].startswith("quiz/") for t in seen["right"]["tests"])
