"""A part's points live in one place, its grader's checks (autograder/graders/points.py); the notebooks'
grade cells and table of sections are copies that `make release` writes and the build checks
(autograder/nbgrader/points.py)."""

from __future__ import annotations

import copy

import nbformat
import pytest

from autograder import assignment
from autograder.graders.points import grader_points
from autograder.nbgrader import points as P

ROOT = assignment.CHECKOUT_ROOT
SOURCE = ROOT / "assignments" / "attention" if ROOT else None
pytestmark = pytest.mark.skipif(ROOT is None, reason="needs the project's checkout (assignments/)")


def source(notebook: str = "attention"):
    return nbformat.read(SOURCE / f"{notebook}.ipynb", as_version=4)


@pytest.mark.parametrize("notebook", assignment.NOTEBOOKS)
def test_the_source_shows_the_graders_points(notebook):
    assert P.differences(source(notebook), notebook, grader_points()) == []


def test_every_part_of_the_notebook_shows_its_points_in_its_grade_cell_and_the_table():
    shown = P.shown_points(source(), "attention")
    for part in (p.name for p in assignment.PARTS if p.notebook == "attention"):
        assert [where.split(" ")[0] for where, _ in shown[part]] == ["the", "grade"], (part, shown[part])


def test_a_changed_check_is_written_everywhere_and_the_build_refuses_a_notebook_that_lags():
    now = grader_points()["masks"]
    points = {**grader_points(), "masks": now + 1}
    nb = source()
    before = copy.deepcopy(nb)
    refused = P.differences(nb, "attention", points)
    assert refused == [f"attention.ipynb, {where}: {now:g} points; the masks grader's checks give {now + 1:g}"
                       for where in ("the table's row 1", "grade cell grade-masks")]
    assert P.with_grader_points(nb, "attention", points)
    assert P.differences(nb, "attention", points) == []
    changed = [(a.source, a.metadata) for a, b in zip(nb.cells, before.cells) if (a.source, a.metadata) != (b.source, b.metadata)]
    assert len(changed) == 2  # the table's cell and the grade cell, nothing else
    assert "the points in this notebook are not the graders'" in P.refusal(refused)


def test_the_build_step_refuses_the_notebook_and_leaves_others_alone(monkeypatch):
    from autograder.graders import points as G

    monkeypatch.setattr(G, "grader_points", lambda: {**grader_points(), "tiles": 1.0})
    resources = {"nbgrader": {"assignment": "attention", "notebook": "attention"}}
    with pytest.raises(ValueError, match=f"grade-tiles: {grader_points()['tiles']:g} points; the tiles grader's checks give 1"):
        P.PartPoints().preprocess(source(), resources)
    other = {"nbgrader": {"assignment": "another", "notebook": "attention"}}
    assert P.PartPoints().preprocess(source(), other)[1] is other
