"""The gradebook writer's speed-ups that replace parts of nbgrader's code apply only with the versions they
were written for, which are those requirements.lock pins; with any other version, nbgrader's own code
runs (tests/test_nbgrader_integration.py checks that both ways write the same gradebook)."""

from __future__ import annotations

from pathlib import Path

from autograder.nbgrader import gradebook as G

LOCK = Path(__file__).resolve().parents[2] / "requirements.lock"


def test_written_for_the_locked_versions():
    locked = dict(line.split(";")[0].strip().split("==", 1) for line in LOCK.read_text().splitlines()
                  if "==" in line and not line.lstrip().startswith("#"))
    assert G.WRITTEN_FOR == {package: locked[package] for package in G.WRITTEN_FOR}
    assert G.patches_apply(*G.WRITTEN_FOR)  # the environment the tests run in is the locked one


def test_another_version_gets_nbgrader_own_code(monkeypatch):
    from nbgrader import api
    from nbgrader.nbgraderformat import common
    from nbgrader.preprocessors import overwritecells, saveautogrades

    monkeypatch.setitem(G.WRITTEN_FOR, "nbgrader", "0.9.5")
    assert not G.patches_apply("nbgrader", "SQLAlchemy") and G.patches_apply("SQLAlchemy")
    own = api.create_engine, overwritecells.Gradebook, saveautogrades.Gradebook, common.jsonschema
    with G.SharedEngines().installed(), G._cells_read_per_notebook(), G._grades_committed_per_notebook(), \
            G._metadata_schema_checked_once():
        assert (api.create_engine, overwritecells.Gradebook, saveautogrades.Gradebook, common.jsonschema) == own
    monkeypatch.setitem(G.WRITTEN_FOR, "nbgrader", G._installed("nbgrader"))
    with G.SharedEngines().installed(), G._cells_read_per_notebook(), G._grades_committed_per_notebook(), \
            G._metadata_schema_checked_once():
        replaced = api.create_engine, overwritecells.Gradebook, saveautogrades.Gradebook, common.jsonschema
        assert all(now is not before for now, before in zip(replaced, own))
    assert (api.create_engine, overwritecells.Gradebook, saveautogrades.Gradebook, common.jsonschema) == own
