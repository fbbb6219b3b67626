"""What a sandbox may see: one decision that covers every way the reference can be installed."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

from autograder import assignment
from autograder.isolation import policy
from autograder.isolation.policy import View, inside, probe, sandbox_view


def visible(path: Path | str, view: View) -> bool:
    """Whether `path` is inside the view and not covered."""
    path = os.path.realpath(path)
    return any(inside(path, e) for e in view.expose) and not any(inside(path, h) for h in view.hide)


def test_the_reference_graders_and_checkout_are_not_visible():
    view = sandbox_view()
    assert not visible(assignment.reference_folder(), view)
    assert not visible(assignment.GRADERS_DIR / "quiz_key.py", view)
    if assignment.CHECKOUT_ROOT is not None:
        assert not visible(assignment.CHECKOUT_ROOT / "solutions", view)
        assert not visible(assignment.CHECKOUT_ROOT / "tests", view)


def test_python_and_torch_stay_visible():
    import torch

    view = sandbox_view()
    assert visible(os.__file__, view) and visible(torch.__file__, view)


def test_secrets_named_by_the_caller_are_hidden_when_they_lie_in_the_view(tmp_path):
    inside_usr = "/usr/share"  # within a system folder of the view
    view = sandbox_view([inside_usr, tmp_path])
    assert not visible(inside_usr, view) and not visible(tmp_path, view)


def test_an_installed_copy_in_a_site_folder_is_hidden(tmp_path, monkeypatch):
    site = tmp_path / "lib" / "site-packages"
    (site / "attention_ref").mkdir(parents=True)
    (site / "attention_ref" / "masks.py").write_text("SECRET = 1\n")
    (site / "numpy_like").mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    view = sandbox_view()
    assert visible(site / "numpy_like", view)
    assert not visible(site / "attention_ref" / "masks.py", view)


def test_a_zip_on_the_path_that_holds_the_reference_is_hidden(tmp_path, monkeypatch):
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("attention_ref/masks.py", "SECRET = 1\n")
    harmless = tmp_path / "harmless.zip"
    with zipfile.ZipFile(harmless, "w") as z:
        z.writestr("other/x.py", "")
    monkeypatch.setattr(sys, "path", [*sys.path, str(archive), str(harmless)])
    view = sandbox_view()
    assert not visible(archive, view) and visible(harmless, view)
    assert str(archive) in view.probe_paths


def test_a_folder_on_the_path_with_the_reference_inside_is_not_exposed(tmp_path, monkeypatch):
    (tmp_path / "attention_ref").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert not visible(tmp_path / "attention_ref", sandbox_view())


def test_the_probe_finds_what_leaks(tmp_path):
    secret = tmp_path / "quiz_key.py"
    secret.write_text("ANSWERS = {}\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "x").write_text("x")
    leaky = View(expose=(), hide=(), devices=(), probe_paths=(str(secret), str(tmp_path / "folder")),
                 probe_modules=("json",))
    found = probe(leaky)
    assert len(found) == 3 and any("json" in f for f in found)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty.py").write_text("")
    tight = View(expose=(), hide=(), devices=(), probe_paths=(str(tmp_path / "empty"), str(tmp_path / "empty.py"),
                                                              str(tmp_path / "absent")),
                 probe_modules=("no_such_module_here",))
    assert probe(tight) == []


def test_the_probe_allows_the_folders_that_lead_to_what_is_exposed(tmp_path):
    (tmp_path / ".venv").mkdir()
    view = View(expose=(str(tmp_path / ".venv" / "lib"),), hide=(), devices=(), probe_paths=(str(tmp_path),),
                probe_modules=())
    assert probe(view) == []
    (tmp_path / "solutions").mkdir()
    assert probe(view) == [f"{tmp_path} can be listed"]


def test_secret_modules_name_the_reference_and_the_quiz_key():
    assert assignment.REFERENCE_PACKAGE in policy.SECRET_MODULES
    assert assignment.QUIZ_KEY_MODULE in policy.SECRET_MODULES


def test_a_covered_package_is_not_a_leak(tmp_path, monkeypatch):
    """A package folder covered by an empty one is still found, as an empty namespace package."""
    (tmp_path / "covered").mkdir()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "__init__.py").write_text("SECRET = 1\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    view = View(expose=(), hide=(), devices=(), probe_paths=(), probe_modules=("covered", "full"))
    assert probe(view) == ["the module full can be imported"]
