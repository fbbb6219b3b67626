"""The assignment's facts agree everywhere they show: assignment.py, the notebooks and the graders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autograder import assignment, quiz
from autograder.graders.points import part_points
from autograder.nbgrader.counting import quiz_counting

ROOT = Path(__file__).resolve().parents[2]

# The grader modules' markers (check, waits) are registered by their own plugin, not in this session.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnknownMarkWarning")


def release_cells(notebook: str) -> list[dict]:
    return json.loads((assignment.release_folder() / f"{notebook}.ipynb").read_text())["cells"]


@pytest.mark.parametrize("part", assignment.PARTS, ids=lambda p: p.name)
def test_each_part_has_a_grade_cell_worth_its_checks(part):
    grade_cells = [c for c in release_cells(part.notebook) if assignment.is_grade_cell(c)]
    cell = next((c for c in grade_cells if assignment.nbgrader_metadata(c)["grade_id"] == part.grade_cell), None)
    assert cell is not None, f"{part.notebook}.ipynb has no grade cell {part.grade_cell}"
    # A quiz that does not count (the self-check default) is released worth 0 points (quizrelease.without_points).
    counted = part.name != quiz.PART or quiz_counting(None, ROOT).counts
    assert assignment.nbgrader_metadata(cell)["points"] == (part_points(part.name) if counted else 0)


def test_every_answer_cell_belongs_to_a_part():
    for notebook in assignment.NOTEBOOKS:
        for cell in release_cells(notebook):
            if assignment.is_answer_cell(cell):
                prefix = assignment.nbgrader_metadata(cell)["grade_id"].split("-", 1)[0]
                assert prefix in assignment.PART_NAMES and assignment.part(prefix).notebook == notebook


def test_parts_are_parsed_in_assignment_order_and_unknown_ones_refused():
    assert assignment.parse_parts("quiz, masks") == ("masks", "quiz")
    with pytest.raises(ValueError, match="unknown part"):
        assignment.parse_parts("masks,attention")
