"""Whether the quiz counts (issue 46, item 2): a self-check quiz is reported and left out of the total
unless the instructor says so; a counted quiz is in the total, but nothing a student sees on Gradescope
before the due date holds its score.

Each result carries the run's decision (`GradedSubmission.counting`, set by the run before anything is
written); no process state decides a score.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from autograder import gradescope, quiz
from autograder.model.results import CheckResult, Counting, GradedSubmission, Visibility
from autograder.nbgrader.counting import quiz_counting
from autograder.reports.table import class_table, grades_csv


EVERY_PART = Counting()


def graded(quiz_right: int, sid: str = "ada", counting: Counting = EVERY_PART) -> GradedSubmission:
    """3 of 4 masks points, and `quiz_right` of 3 quiz questions right, counted as `counting` says."""
    checks = [CheckResult("masks", "a", 3.0), CheckResult("masks", "b", 1.0, False, ["why"])]
    checks += [CheckResult("quiz", f"q0{i}: asks", 1.0, i <= quiz_right, [] if i <= quiz_right else ["wrong"])
               for i in range(1, 4)]
    return GradedSubmission(sid, checks, counting=counting)


def csv_row(submission: GradedSubmission) -> dict[str, str]:
    return next(csv.DictReader(io.StringIO(grades_csv([submission]))))


# ---------------------------------------------------------------- a self-check quiz: reported, not counted


def test_a_quiz_left_out_is_reported_but_not_in_the_total():
    g = graded(2, counting=Counting(uncounted=frozenset({"quiz"})))
    assert g.part_scores() == {"masks": (3.0, 4.0), "quiz": (2.0, 3.0)}
    assert (g.total, g.max_score) == (3.0, 4.0)
    data = json.loads(json.dumps(g.to_gradescope()))
    assert data["score"] == 3.0 and data["extra_data"]["uncounted"] == ["quiz"]
    assert data["output"].splitlines() == ["Total: 3 / 4", "masks: 3 / 4",
                                           "quiz: 2 / 3 (self-check: not counted in the total)"]
    row = csv_row(g)
    assert (row["quiz"], row["total"], row["max"], row["not_in_total"]) == ("2", "3", "4", "quiz")
    assert class_table([g]).splitlines()[-1] == "(total: without quiz, reported but not counted)"
    again = GradedSubmission.from_gradescope(data)  # as the gradebook reads it back: the quiz still left out
    assert (again.total, again.max_score) == (3.0, 4.0)


def test_by_default_every_part_counts_in_the_results_model():
    """A result no run decided for counts every part: grade_one, the nbgrader grade cells."""
    g = graded(2)
    assert (g.total, g.max_score) == (5.0, 7.0)
    assert csv_row(g)["not_in_total"] == "" and g.to_gradescope()["output"].startswith("Total: 5 / 7\n")
    assert "not counted" not in class_table([g])


# ---------------------------------------------------------------- a counted quiz on Gradescope


def test_a_counted_quiz_is_in_the_score_but_in_nothing_a_student_sees_before_the_due_date():
    held = Counting(held_back=frozenset({"quiz"}))
    visibility = Visibility("visible", ("quiz/*", "masks/*"))  # even a pattern that names the quiz
    seen = []
    for right in (0, 2, 3):
        data = json.loads(json.dumps(graded(right, counting=held).to_gradescope(visibility)))
        assert data["score"] == 3.0 + right  # the grade Gradescope keeps
        assert {t["visibility"] for t in data["tests"] if t["name"].startswith("quiz/")} == {"after_due_date"}
        assert {t["visibility"] for t in data["tests"] if t["name"].startswith("masks/")} == {"visible"}
        seen.append(gradescope.seen_before_due_date(data))
    assert seen[0] == seen[1] == seen[2]  # the quiz's answers change nothing a student sees
    assert "score" not in seen[0]  # a test is hidden: Gradescope does not show the total
    assert seen[0]["output"].splitlines() == [
        "Total: 3 / 4 so far: the quiz (3 points) is marked after the due date", "masks: 3 / 4",
        "quiz: marked after the due date"]
    assert csv_row(graded(2, counting=held))["total"] == "5"  # the instructor's grades count it


def test_the_student_view_follows_gradescopes_rules():
    data = {"score": 5.0, "output": "Total: 5", "visibility": "visible",
            "tests": [{"name": "a", "score": 1, "visibility": "visible"}, {"name": "b", "score": 4}]}
    assert gradescope.seen_before_due_date(data)["score"] == 5.0  # every test shown (the default is visible)
    data["tests"][1]["visibility"] = "after_due_date"
    assert gradescope.seen_before_due_date(data) == {"tests": [data["tests"][0]], "output": "Total: 5"}
    assert gradescope.seen_before_due_date({**data, "visibility": "hidden"}) == {"tests": [data["tests"][0]]}


# ---------------------------------------------------------------- who decides


def course(tmp_path: Path, config: str) -> Path:
    (tmp_path / quiz.COURSE_CONFIG).write_text(config)
    return tmp_path


@pytest.mark.parametrize("config, flag, counts, source", [
    (None, None, False, "the mode of the grader's release"),  # the committed release: self-check
    ('c.QuizRelease.mode = "self-check"\n', None, False, "c.QuizRelease.mode = 'self-check'"),
    ('c.QuizRelease.mode = "counted"\n', None, True, "c.QuizRelease.mode = 'counted'"),
    ('c.QuizRelease.mode = "counted"\nc.QuizRelease.counts = False\n', None, False, "c.QuizRelease.counts = False"),
    ('c.QuizRelease.mode = "self-check"\nc.QuizRelease.counts = True\n', None, True, "c.QuizRelease.counts = True"),
    ('c.QuizRelease.mode = "counted"\n', False, False, "--no-quiz-counts"),
    (None, True, True, "--quiz-counts"),
])
def test_the_instructor_decides_and_the_run_says_on_whose_word(tmp_path, config, flag, counts, source):
    root = course(tmp_path, config) if config else tmp_path
    decided = quiz_counting(flag, root)
    assert decided.counts is counts and source in decided.source
    line = decided.line()
    assert line.startswith("quiz: ") and source in line
    assert ("counted in the total" in line and "not counted" not in line) if counts else "not counted" in line
    assert Counting.of_quiz(decided.counts) == (Counting(held_back=frozenset({"quiz"})) if counts
                                                else Counting(uncounted=frozenset({"quiz"})))


def test_a_self_check_quiz_counted_anyway_is_warned_about(tmp_path):
    assert "its points go to anyone who tries" in quiz_counting(True, tmp_path).line()
    assert "anyone" not in quiz_counting(True, course(tmp_path, 'c.QuizRelease.mode = "counted"\n')).line()


def test_the_course_settings_are_read_without_running_the_file():
    assert quiz.quiz_settings('c.QuizRelease.mode = "counted"\nc.QuizRelease.mode = "self-check"\n') == {
        "mode": "self-check"}  # the last one, as running it would leave it
    assert quiz.quiz_settings("c.QuizRelease.counts = None\nc.Other.mode = 'x'\n") == {"counts": None}
    assert quiz.quiz_settings("import os\nc.QuizRelease.mode = os.environ['MODE']\n") is None
    assert quiz.quiz_settings("if True:\n    c.QuizRelease.mode = 'counted'\n") is None
    assert quiz.quiz_settings("c.QuizRelease.mode = (\n") is None


def test_a_config_that_only_running_says_is_run(tmp_path):
    root = course(tmp_path, "c = get_config()\nMODE = 'counted'\nc.QuizRelease.mode = MODE\n")
    decided = quiz_counting(None, root)
    assert decided.counts and decided.mode == "counted"
    broken = course(tmp_path, "c = get_config()\nc.QuizRelease.mode = undefined_name\n")
    decided = quiz_counting(None, broken)
    assert not decided.counts and "could not be read (NameError)" in decided.source


@pytest.mark.parametrize("recorded", [True, False, None])
def test_the_gradescope_zip_grades_with_the_decision_it_recorded(tmp_path, monkeypatch, recorded):
    """The zip records whether the quiz counts when it is built (in the course folder); every upload is
    graded with that word, whatever folder Gradescope runs it in."""
    from dataclasses import asdict

    (tmp_path / "source").mkdir()
    settings = gradescope.Settings(quiz_counts=recorded)
    (tmp_path / "source" / gradescope.CONFIG_FILE).write_text(json.dumps(asdict(settings)))
    (tmp_path / "source" / gradescope.SECRET_FILE).write_text("s\n")
    runs = []

    def ran(options):
        runs.append(options)
        raise gradescope.RunError("not graded here", 1)

    monkeypatch.setattr(gradescope, "run_class", ran)
    gradescope.run(tmp_path)
    (options,) = runs
    assert options.quiz_counts is recorded


def test_the_zip_records_the_course_folders_decision(tmp_path, monkeypatch):
    import zipfile

    wheel = tmp_path / "autograder-0-py3-none-any.whl"
    wheel.write_bytes(b"")
    monkeypatch.setattr(gradescope, "_wheel", lambda work: wheel)
    (tmp_path / "secret").write_text("s\n")
    course(tmp_path, 'c.QuizRelease.mode = "counted"\n')
    monkeypatch.chdir(tmp_path)
    gradescope.build(tmp_path / "autograder.zip", tmp_path / "secret", gradescope.Settings())
    with zipfile.ZipFile(tmp_path / "autograder.zip") as archive:
        assert json.loads(archive.read(gradescope.CONFIG_FILE))["quiz_counts"] is True


# ---------------------------------------------------------------- one total, wherever it is shown (issue 59)


def test_the_table_printed_after_a_run_counts_as_the_run_did(tmp_path):
    """The run's totals are grades.csv's; its closing table, printed after `run_class` has returned, leaves
    the self-check quiz out as each result says (it once printed 127 beside grades.csv's 105)."""
    from autograder.classrun import RunOutcome, closing_lines

    left_out = Counting(uncounted=frozenset({"quiz"}))
    outcome = RunOutcome([graded(2, counting=left_out)], [], counting=left_out)
    table = closing_lines(outcome, tmp_path, 0.0).split("\n\n")[0].splitlines()
    header, row = table[0].split(), table[2].split()
    assert header[header.index("total") + 1:header.index("total") + 4] == ["quiz", "(not", "counted)"]
    assert row == ["ada", "3", "3", "2", "graded"]  # masks, the total, then the quiz apart
    assert table[-1] == "(total: without quiz, reported but not counted)"
    assert graded(2).total == 5.0  # and a result no run decided for counts every part


def test_the_gradebooks_cell_labels_a_part_left_out():
    from autograder.reports.gradecell import grade_cell_text

    checks = graded(2).checks_of("quiz")
    assert grade_cell_text("quiz", checks, counted=False).splitlines()[-1] == \
        "quiz: 2 / 3 points (self-check: not counted in the total)"
    assert "not counted" not in grade_cell_text("quiz", checks)
