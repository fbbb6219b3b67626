"""What replaces part of another library's code or of what it imports (the gradebook writer's speed-ups,
jsonschema without the IRI grammars, copydetect without pyplot) applies only with the versions it was
written for, which are those requirements.lock pins; with any other version, the library's own code runs
(tests/test_nbgrader_integration.py checks that both ways write the same gradebook)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.nbgrader import course
from autograder.nbgrader import gradebook as G
from autograder import versions as V

LOCK = Path(__file__).resolve().parents[2] / "requirements.lock"


def test_written_for_the_locked_versions():
    locked = dict(line.split(";")[0].strip().split("==", 1) for line in LOCK.read_text().splitlines()
                  if "==" in line and not line.lstrip().startswith("#"))
    assert V.WRITTEN_FOR == {package: locked[package] for package in V.WRITTEN_FOR}
    assert V.patches_apply(*V.WRITTEN_FOR)  # the environment the tests run in is the locked one


def test_another_version_gets_nbgrader_own_code(monkeypatch):
    from nbgrader import api
    from nbgrader.nbgraderformat import common
    from nbgrader.preprocessors import overwritecells, saveautogrades

    monkeypatch.setitem(V.WRITTEN_FOR, "nbgrader", "0.9.5")
    assert not V.patches_apply("nbgrader", "SQLAlchemy") and V.patches_apply("SQLAlchemy")
    own = api.create_engine, overwritecells.Gradebook, saveautogrades.Gradebook, common.jsonschema
    with G.SharedEngines().installed(), G._cells_read_per_notebook(), G._grades_committed_per_notebook(), \
            G._metadata_schema_checked_once():
        assert (api.create_engine, overwritecells.Gradebook, saveautogrades.Gradebook, common.jsonschema) == own
    monkeypatch.setitem(V.WRITTEN_FOR, "nbgrader", V.installed("nbgrader"))
    with G.SharedEngines().installed(), G._cells_read_per_notebook(), G._grades_committed_per_notebook(), \
            G._metadata_schema_checked_once():
        replaced = api.create_engine, overwritecells.Gradebook, saveautogrades.Gradebook, common.jsonschema
        assert all(now is not before for now, before in zip(replaced, own))
    assert (api.create_engine, overwritecells.Gradebook, saveautogrades.Gradebook, common.jsonschema) == own


@pytest.mark.parametrize("kept_out", [True, False], ids=["written for", "another version"])
def test_the_iri_grammars_are_left_out_only_for_the_jsonschema_it_was_written_for(kept_out, monkeypatch):
    monkeypatch.delitem(sys.modules, "jsonschema", raising=False)  # as before nbgrader is first imported
    monkeypatch.delitem(sys.modules, "rfc3987_syntax", raising=False)
    monkeypatch.setitem(V.WRITTEN_FOR, "jsonschema", V.installed("jsonschema") if kept_out else "0")
    course._without_iri_grammars()
    assert ("rfc3987_syntax" in sys.modules and sys.modules["rfc3987_syntax"] is None) == kept_out


COPYDETECT = """
import sys
from autograder import versions
versions.WRITTEN_FOR["copydetect"] = sys.argv[1]
from autograder.reports import similarity
similarity.fingerprint("def f(x):\\n    return x + 1\\n" * 3)
print("matplotlib.pyplot" in sys.modules)
"""


@pytest.mark.parametrize("kept_out", [True, False], ids=["written for", "another version"])
def test_copydetect_goes_without_pyplot_only_for_the_version_it_was_written_for(kept_out, tmp_path):
    """Without pyplot, copydetect writes nothing into the grader's home (matplotlib's font cache)."""
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("XDG_", "MPL"))}
    version = V.installed("copydetect") if kept_out else "0"
    loaded = subprocess.run([sys.executable, "-c", COPYDETECT, version], env={**env, "HOME": str(home)},
                            capture_output=True, text=True, check=True, cwd=LOCK.parent).stdout.split()[-1]
    assert loaded == str(not kept_out)
    if kept_out:
        assert not list(home.rglob("*"))
