"""A PATH that holds several students is graded as one submission per student, through the command line.

Issue 46: a class folder, a folder of per-student zips and an LMS bulk download each gave one row,
"graded", exit 0, built from the newest files of any student. Each layout here holds two or three
students whose code scores differently (a correct notebook or module, and one whose `causal_average`
is wrong), so a row graded from another student's files shows. Only part `masks` is graded.
"""

from __future__ import annotations

import csv
import html
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # grading runs through `python -m autograder`

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions" / "attention"
BASE = ROOT / "tests" / "corpus" / "base.py"
WRONG = "\n\ndef causal_average(T):\n    return torch.ones(T, T) / T\n"  # every row averages the future too
SECRET = "class-folders"


def grade(*paths: Path, out: Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """`python -m autograder grade PATHS --out OUT --parts masks`, run from this checkout."""
    command = [sys.executable, "-m", "autograder", "grade", *map(str, paths), "--out", str(out), "--parts", "masks",
               "--jobs", "2", *extra]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={**os.environ, "AUTOGRADER_SECRET": SECRET})


def rows(out: Path) -> dict[str, dict[str, str]]:
    """grades.csv by submission id."""
    with open(out / "grades.csv", newline="") as fh:
        return {row["submission"]: row for row in csv.DictReader(fh)}


def masks(out: Path) -> dict[str, float]:
    """Each row's masks score."""
    return {sid: float(row["masks"]) for sid, row in rows(out).items()}


def notebooks(folder: Path, *names: str, prefix: str = "") -> Path:
    """The answer key's notebooks (`attention`, `quiz`) in `folder`, each name given `prefix`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(SOLUTIONS / f"{name}.ipynb", folder / f"{prefix}{name}.ipynb")
    return folder


def module(path: Path, wrong: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BASE.read_text() + (WRONG if wrong else ""))
    return path


@pytest.fixture(scope="module")
def full_marks(tmp_path_factory) -> tuple[float, float]:
    """The masks score of a correct submission and of the wrong `causal_average`, each graded alone."""
    folder = tmp_path_factory.mktemp("alone")
    run = grade(module(folder / "right.py"), module(folder / "wrong.py", wrong=True), out=folder / "out")
    assert run.returncode == 0, run.stderr
    scores = masks(folder / "out")
    assert scores["right"] > scores["wrong"], scores
    return scores["right"], scores["wrong"]


def test_a_class_folder_is_graded_one_row_per_student(tmp_path, full_marks):
    right, wrong = full_marks
    notebooks(tmp_path / "class" / "alice", "attention", "quiz")
    module(tmp_path / "class" / "bob" / "solution.py", wrong=True)
    notebooks(tmp_path / "class" / "carol" / "work", "attention")
    run = grade(tmp_path / "class", out=tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert masks(tmp_path / "out") == {"alice": right, "bob": wrong, "carol": right}
    first, *rest = run.stderr.splitlines()
    assert first.startswith("isolation:") and any("3 students (a folder or zip per student)" in line for line in rest)
    assert "no quiz.ipynb found" in rows(tmp_path / "out")["carol"]["status"]  # carol's own files, not alice's quiz
    assert "no quiz.ipynb found" not in rows(tmp_path / "out")["alice"]["status"]


def test_a_folder_of_zips_is_graded_one_row_per_zip(tmp_path, full_marks):
    right, wrong = full_marks
    zips = tmp_path / "zips"
    zips.mkdir()
    with zipfile.ZipFile(zips / "alice.zip", "w") as archive:
        for name in ("attention", "quiz"):
            archive.write(SOLUTIONS / f"{name}.ipynb", f"alice/{name}.ipynb")
    with zipfile.ZipFile(zips / "bob.zip", "w") as archive:
        archive.write(module(tmp_path / "bob.py", wrong=True), "solution.py")
    run = grade(zips, out=tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert masks(tmp_path / "out") == {"alice": right, "bob": wrong}


def test_canvas_names_give_one_row_per_user_with_all_their_files(tmp_path, full_marks):
    right, wrong = full_marks
    canvas = notebooks(tmp_path / "canvas", "attention", prefix="smithjohn_12345_678_")
    notebooks(canvas, "quiz", prefix="smithjohn_12345_679_")
    module(canvas / "leeann_LATE_23456_680_solution.py", wrong=True)
    run = grade(canvas, out=tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert masks(tmp_path / "out") == {"12345": right, "23456": wrong}
    status = rows(tmp_path / "out")["12345"]["status"]
    assert "quiz.ipynb read from smithjohn_12345_679_quiz.ipynb" in status and "no quiz.ipynb" not in status


def test_moodle_folders_give_one_row_per_participant(tmp_path, full_marks):
    right, wrong = full_marks
    moodle = tmp_path / "moodle"
    notebooks(moodle / "Ann Lee_101_assignsubmission_file", "attention", "quiz")
    (moodle / "Ann Lee_101_assignsubmission_onlinetext").mkdir()
    (moodle / "Ann Lee_101_assignsubmission_onlinetext" / "onlinetext.html").write_text("<p>done</p>")
    module(moodle / "Bo Chen_102_assignsubmission_file" / "solution.py", wrong=True)
    run = grade(moodle, out=tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert masks(tmp_path / "out") == {"Ann Lee_101": right, "Bo Chen_102": wrong}


def test_blackboard_names_grade_each_students_latest_attempt(tmp_path, full_marks):
    right, wrong = full_marks
    board = tmp_path / "blackboard"
    module(board / "HW1_jdoe_attempt_2024-01-01-12-00-00_solution.py", wrong=True)
    module(board / "HW1_jdoe_attempt_2024-01-02-09-30-00_solution.py")
    for attempt in ("jdoe_attempt_2024-01-01-12-00-00", "jdoe_attempt_2024-01-02-09-30-00",
                    "asmith_attempt_2024-01-01-08-00-00"):
        (board / f"HW1_{attempt}.txt").write_text("Name: someone\nComments:\nThere are no student comments.\n")
    module(board / "HW1_asmith_attempt_2024-01-01-08-00-00_solution.py", wrong=True)
    run = grade(board, out=tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert masks(tmp_path / "out") == {"asmith": wrong, "jdoe": right}
    assert "jdoe: 2 attempts in" in run.stderr and "the latest (2024-01-02-09-30-00) is graded" in run.stderr


def test_an_entry_named_unlike_the_rest_is_a_note_never_the_class(tmp_path, full_marks):
    """Issue 53: a folder beside a Canvas download once refused the class (exit 2, no one graded). Canvas's
    names read the most entries: the folder is a note, in the run's output and the class report."""
    right, wrong = full_marks
    mixed = notebooks(tmp_path / "mixed", "attention", prefix="smithjohn_12345_678_")
    module(mixed / "leeann_23456_680_hw_attempt_2024-01-01-12-00-00_solution.py", wrong=True)  # reads as Blackboard's too
    notebooks(mixed / "alice", "attention")
    run = grade(mixed, out=tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert masks(tmp_path / "out") == {"12345": right, "23456": wrong}
    note = (f"alice/ in {mixed}: named as a folder or zip per student, unlike the rest (Canvas bulk-download names), "
            f"so whose it is would be a guess: not graded; grade it as a PATH of its own: `grade {mixed}/alice/`")
    assert f"note: {note}" in run.stderr.splitlines()
    assert html.escape(note, quote=True) in (tmp_path / "out" / "class_report.html").read_text()


def test_one_students_folder_is_still_one_row(tmp_path, full_marks):
    right, wrong = full_marks
    alice = notebooks(tmp_path / "alice", "attention", "quiz")
    notebooks(alice / ".ipynb_checkpoints", "attention", prefix="x-")
    module(alice / "attention (1).ipynb")  # a copy that is no notebook: the exactly named file is read
    bob = tmp_path / "bob"
    module(bob / "solution.py", wrong=True)
    (bob / "helpers.py").write_text("SCALE = 1.0\n")  # one student's code in two modules
    run = grade(alice, bob, out=tmp_path / "out")
    assert run.returncode == 0, run.stderr
    assert masks(tmp_path / "out") == {"alice": right, "bob": wrong}
    assert "each graded as a submission of its own" not in run.stderr
    assert f"{bob}: 2 modules and no notebook (helpers.py, solution.py), graded as one student's code" in run.stderr


def test_a_dask_cluster_grades_the_students_split_from_a_path(tmp_path, full_marks):
    right, wrong = full_marks
    canvas = notebooks(tmp_path / "canvas", "attention", prefix="smithjohn_12345_678_")
    module(canvas / "leeann_23456_680_solution.py", wrong=True)
    run = grade(canvas, out=tmp_path / "out", extra=("--dask", "local:1"))
    assert run.returncode == 0, run.stderr
    assert masks(tmp_path / "out") == {"12345": right, "23456": wrong}
