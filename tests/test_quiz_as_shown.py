"""A quiz is graded against the build the student was given (issue 46, item 1), as a course meets it.

A course folder made as the README says (this project's nbgrader_config.py and assignments/ copied into
it), its quiz counted and shuffled, its release built by `nbgrader generate_assignment` with the course
secret. In that folder, `python -m autograder grade` with the secret:

* a quiz.ipynb of that release answered right in every question, as its options are shown, gets every
  point (it used to get 2 to 7 of 22: the grader scored it against its own copy of the release);
* the feedback of a wrong answer quotes the option text the student saw under that letter;
* a quiz.ipynb of another course's build (another secret), answered right as it shows its options, is
  not scored against anything: every question it shows in another order fails, saying so; exit 0.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import assignment, quiz
from autograder.graders.quiz_key import ANSWERS
from test_quiz_modes import ASSIGNMENT, build, shown_key, wrong

pytestmark = pytest.mark.slow

SECRET, OTHER = "our-course-secret", "another-course-secret"


@pytest.fixture(scope="module")
def courses(tmp_path_factory) -> dict[str, Path]:
    """secret -> a course root whose counted, shuffled quiz was released with that secret."""
    return {s: build(tmp_path_factory.mktemp("course"), mode="counted", shuffle=True, secret=s) for s in (SECRET, OTHER)}


def answered(release: Path, answers: dict[str, str | None], folder: Path) -> Path:
    """A student's folder holding the released quiz.ipynb with `answers` in its answer cells."""
    nb = nbformat.read(release / "quiz.ipynb", as_version=4)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("quiz-q") and answers.get(grade_id[5:]):
            cell.source = cell.source.replace("# YOUR ANSWER HERE", f'answer_{grade_id[5:]} = "{answers[grade_id[5:]]}"')
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / "quiz.ipynb")
    return folder


def grade(course: Path, students: list[Path], out: Path) -> tuple[subprocess.CompletedProcess, dict, dict]:
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, students), "--out", str(out),
                          "--parts", "quiz", "--secret", SECRET, "--jobs", "1"],
                         cwd=course, capture_output=True, text=True, timeout=600)
    rows = {r["submission"]: r for r in csv.DictReader((out / "grades.csv").open())} if (out / "grades.csv").is_file() else {}
    results = {s.name: json.loads((out / s.name / "results.json").read_text()) for s in students
               if (out / s.name / "results.json").is_file()}
    return run, rows, results


def test_a_quiz_answered_right_as_shown_gets_every_point(courses, tmp_path):
    course = courses[SECRET]
    release = course / "release" / ASSIGNMENT
    key = shown_key(SECRET)  # the right letters as this course's release shows the options
    right = answered(release, key, tmp_path / "right")
    chosen = wrong(key["q05"])
    one_wrong = answered(release, {**key, "q05": chosen}, tmp_path / "one_wrong")
    run, rows, results = grade(course, [right, one_wrong], tmp_path / "out")
    assert run.returncode == 0, run.stderr[-3000:]
    assert rows["right"]["quiz"] == str(len(ANSWERS)), rows
    assert not rows["right"]["status"].startswith("grader error")  # "graded with problems: no attention.ipynb"
    assert rows["one_wrong"]["quiz"] == str(len(ANSWERS) - 1)
    assert run.stderr.splitlines()[1].startswith("quiz: counted, counted in the total (nbgrader_config.py")
    assert rows["right"]["total"] == str(len(ANSWERS))  # a counted course counts it
    # the feedback quotes the option texts the student saw, under the letters they saw them
    shown = quiz.read_questions(nbformat.read(release / "quiz.ipynb", as_version=4))["q05"]
    failed = next(t for t in results["one_wrong"]["tests"] if t["name"].startswith("quiz/q05"))
    assert f'Got: {chosen}, "{shown.option(chosen)}"' in failed["output"]
    assert f'Expected: {key["q05"]}, "{shown.option(key["q05"])}"' in failed["output"]
    passed = next(t for t in results["right"]["tests"] if t["name"].startswith("quiz/q05"))
    assert f'Your answer: {key["q05"]}, "{shown.option(key["q05"])}": right.' in passed["output"]


def test_a_quiz_of_another_build_is_refused_saying_what_disagrees(courses, tmp_path):
    theirs = courses[OTHER] / "release" / ASSIGNMENT
    student = answered(theirs, shown_key(OTHER), tmp_path / "elsewhere")  # right, as that build shows them
    run, rows, results = grade(courses[SECRET], [student], tmp_path / "out")
    assert run.returncode == 0, run.stderr[-3000:]
    assert not rows["elsewhere"]["status"].startswith("grader error"), rows
    differ = [q for q in ANSWERS if quiz.option_order(OTHER, q) != quiz.option_order(SECRET, q)]
    assert len(differ) > len(ANSWERS) // 2
    tests = {t["name"].split(":")[0].removeprefix("quiz/"): t for t in results["elsewhere"]["tests"]}
    for q in differ:
        assert tests[q]["status"] == "failed", (q, tests[q]["output"])
        assert "Not graded: your quiz.ipynb is not the quiz this course released: it shows the options of " \
               "question" in tests[q]["output"]
        assert "another order than this course's (the order the course secret gives)" in tests[q]["output"]
    assert float(rows["elsewhere"]["quiz"]) == len(ANSWERS) - len(differ)  # the questions shown alike agree


def test_a_question_changed_by_hand_is_refused(courses, tmp_path):
    release = courses[SECRET] / "release" / ASSIGNMENT
    student = answered(release, shown_key(SECRET), tmp_path / "edited")
    nb = nbformat.read(student / "quiz.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.get("id") == "q03-question")
    cell.source = cell.source.replace("- **a**: ", "- **a**: (my note) ")
    nbformat.write(nb, student / "quiz.ipynb")
    run, rows, results = grade(courses[SECRET], [student], tmp_path / "out")
    assert run.returncode == 0, run.stderr[-3000:]
    assert rows["edited"]["quiz"] == str(len(ANSWERS) - 1)
    q03 = next(t for t in results["edited"]["tests"] if t["name"].startswith("quiz/q03"))
    assert "the options of question 3 are not the course's" in q03["output"]


def round_tripped(path: Path) -> None:
    """The notebook as Jupytext writes it back from a script (`jupytext --to py:percent`, then `--to ipynb`): new
    cell ids, no notebook metadata but the kernel's; cells, their nbgrader metadata and their text kept."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        cell.id = nbformat.v4.new_markdown_cell().id
    nb.metadata = {"kernelspec": nb.metadata["kernelspec"]}
    nbformat.write(nb, path)


def test_a_quiz_round_tripped_through_jupytext_is_graded_where_its_options_have_one_order(tmp_path):
    """Issue 53, item 9: a course that shows the options as written (the grader's own release, graded from a
    folder with no course of its own) grades such a notebook from its grade ids and its question cells, found
    by their numbers: every point, where it was refused ("its cell of question 1 it is missing")."""
    student = answered(Path(assignment.release_folder()), dict(ANSWERS), tmp_path / "round_trip")
    round_tripped(student / "quiz.ipynb")
    (tmp_path / "elsewhere").mkdir()
    run, rows, _ = grade(tmp_path / "elsewhere", [student], tmp_path / "out")
    assert run.returncode == 0, run.stderr[-3000:]
    assert rows["round_trip"]["quiz"] == str(len(ANSWERS)), rows


def test_the_course_folder_is_made_as_the_readme_says(courses):
    """The fixture's course: this project's nbgrader_config.py and assignments/, the quiz settings appended."""
    root = courses[SECRET]
    config = (root / "nbgrader_config.py").read_text()
    assert config.startswith((Path(__file__).resolve().parent.parent / "nbgrader_config.py").read_text())
    assert 'c.QuizRelease.mode = \'counted\'\nc.QuizRelease.shuffle = True' in config
    assert quiz.build_record(json.loads((root / "release" / ASSIGNMENT / "quiz.ipynb").read_text())) == {
        "mode": "counted", "options": quiz.SHUFFLED}
