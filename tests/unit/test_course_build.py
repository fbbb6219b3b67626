"""The course's build is what is graded (autograder/nbgrader/build.py): its release is read, its gradebook's
points must be this grader's and its quiz must count as this run counts it; otherwise the run is refused with
what differs and the command that reconciles them. A course is stood in for by what the check reads of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder import assignment, quiz
from autograder.graders.points import grader_points
from autograder.nbgrader.build import graded_build
from autograder.nbgrader.course import CourseError

POINTS = grader_points()


def course(tmp_path: Path, recorded: dict[str, float] | None = None) -> SimpleNamespace:
    """A course whose source and release are copies of the grader's release, its gradebook `recorded`."""
    release, source = tmp_path / "release" / "attention", tmp_path / "source" / "attention"
    for folder in (release, source):
        shutil.copytree(assignment.release_folder(), folder)
    cells = {p.grade_cell: POINTS[p.name] for p in assignment.PARTS}
    cells[assignment.part("quiz").grade_cell] = 0.0  # a self-check quiz, built not to count
    return SimpleNamespace(assignment="attention", root=tmp_path, release_folder=lambda: release,
                           source_folder=lambda: source, grade_cell_points=lambda: {**cells, **(recorded or {})})


def self_check(flag: bool | None = None) -> quiz.QuizCounting:
    counts = bool(flag)
    source = "--quiz-counts" if flag else "nbgrader_config.py: c.QuizRelease.mode = 'self-check'"
    return quiz.QuizCounting(counts, "self-check", source)


def test_a_course_that_agrees_is_graded_against_its_own_release(tmp_path):
    release, notes = graded_build(course(tmp_path), self_check())
    assert release.where.startswith("the course's release") and not notes
    assert release.files["attention.ipynb"] == (tmp_path / "release" / "attention" / "attention.ipynb").read_bytes()


def test_points_that_differ_from_the_graders_are_refused_with_the_command_that_reconciles(tmp_path):
    with pytest.raises(CourseError) as refused:
        graded_build(course(tmp_path, {"grade-masks": POINTS["masks"] + 1}), self_check())
    said = str(refused.value)
    assert f"grade-masks: {POINTS['masks'] + 1:g} points in the course's release, {POINTS['masks']:g} by this " \
           "grader's checks" in said
    assert "nbgrader generate_assignment attention --force" in said


def test_a_quiz_counted_unlike_its_build_is_refused(tmp_path):
    with pytest.raises(CourseError) as refused:
        graded_build(course(tmp_path), self_check(True))
    said = str(refused.value)
    assert "grade-quiz: this run counts it (--quiz-counts), but the course's release gives it 0 points" in said
    assert "grade without --quiz-counts" in said and "c.QuizRelease.counts = True" in said


def test_a_release_missing_is_refused(tmp_path):
    built = course(tmp_path)
    shutil.rmtree(built.release_folder())
    with pytest.raises(CourseError, match="no build of 'attention'.*nbgrader generate_assignment attention"):
        graded_build(built, self_check())


def test_a_source_whose_setup_cells_differ_from_the_release_gets_a_note(tmp_path):
    built = course(tmp_path)
    path = built.source_folder() / "attention.ipynb"
    nb = json.loads(path.read_text())
    next(c for c in nb["cells"] if c.get("id") == "setup")["source"].append("\nimport numpy as np\n")
    path.write_text(json.dumps(nb))
    _, notes = graded_build(built, self_check())
    assert len(notes) == 1 and "setup cells of attention.ipynb" in notes[0] and "release_assignment" in notes[0]
