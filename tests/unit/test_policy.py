"""What a sandbox may see: one decision that covers every way the reference can be installed."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

from autograder import assignment
from autograder.isolation import policy
from autograder.isolation.policy import View, inside, probe, probe_targets, sandbox_view


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


def test_secrets_named_by_the_caller_are_left_out_and_never_named_to_a_sandbox(tmp_path):
    inside_usr = "/usr/share/doc"  # within a system folder of the view
    view = sandbox_view([inside_usr, tmp_path])
    assert not visible(inside_usr, view) and not visible(tmp_path, view)
    assert visible("/usr/share/man", view) and visible("/usr/bin", view)  # what is around them stays
    named = "\n".join(view.expose + view.hide)
    assert inside_usr not in named.split("\n") and str(tmp_path) not in named
    assert inside_usr in [t[0] for t in probe_targets([inside_usr])[0]]  # only the grader's probe names them


def test_an_installed_copy_in_a_site_folder_is_hidden(tmp_path, monkeypatch):
    site = tmp_path / "lib" / "site-packages"
    (site / "attention_ref").mkdir(parents=True)
    (site / "attention_ref" / "masks.py").write_text("SECRET = 1\n")
    (site / "numpy_like").mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    view = sandbox_view()
    assert visible(site / "numpy_like", view)
    assert not visible(site / "attention_ref" / "masks.py", view)


def test_a_link_beside_a_hidden_package_is_not_allowed_as_its_target(tmp_path):
    """A venv's lib64 -> lib: Landlock's rule on the link would be on lib, the hidden package's folder."""
    venv = tmp_path / "venv"
    (venv / "lib" / "attention_ref").mkdir(parents=True)
    (venv / "lib" / "numpy_like").mkdir()
    (venv / "lib64").symlink_to("lib")
    (venv / "bin").mkdir()
    allowed = policy.around([str(venv)], {str(venv / "lib" / "attention_ref")})
    assert str(venv / "lib64") not in allowed and str(venv / "bin") in allowed
    assert str(venv / "lib" / "numpy_like") in allowed


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
    assert str(archive) in [t[0] for t in probe_targets()[0]]


def test_a_folder_on_the_path_with_the_reference_inside_is_not_exposed(tmp_path, monkeypatch):
    (tmp_path / "attention_ref").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert not visible(tmp_path / "attention_ref", sandbox_view())


def targets(*paths) -> list[list]:
    return [[str(p), os.stat(p).st_dev, os.stat(p).st_ino] for p in paths]


def test_the_probe_finds_what_leaks(tmp_path):
    secret = tmp_path / "quiz_key.py"
    secret.write_text("ANSWERS = {}\n")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "x").write_text("x")
    found = probe(targets(secret, tmp_path / "folder"), ["json"])
    assert len(found) == 3 and any("json" in f for f in found)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty.py").write_text("")
    assert probe(targets(tmp_path / "empty", tmp_path / "empty.py"), ["no_such_module_here"]) == []


def test_the_probe_reads_for_real_a_file_it_may_find_but_not_open(tmp_path):
    unreadable = tmp_path / "key.py"
    unreadable.write_text("ANSWERS = {}\n")
    unreadable.chmod(0)
    if os.access(unreadable, os.R_OK):  # root reads it anyway: nothing to show here
        return
    assert probe(targets(unreadable), []) == []


def test_a_folder_at_the_same_path_that_is_not_the_same_folder_hides_nothing(tmp_path):
    """The sandbox's own /tmp is not the grader's, and an empty folder on the way to what is exposed is not
    the checkout: only the very folder (device and inode) counts."""
    (tmp_path / "roster").mkdir()
    (tmp_path / "roster" / "alice.py").write_text("")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "scratch").write_text("")
    identity = targets(tmp_path / "other")[0][1:]
    assert probe([[str(tmp_path / "roster"), *identity]], []) == []
    assert probe(targets(tmp_path / "roster"), []) == [f"{tmp_path / 'roster'} can be listed"]
    absent = [str(tmp_path / "absent"), 1, 2]
    assert probe([absent], []) == []
    assert probe_targets([tmp_path / "absent"])[0] == [t for t in probe_targets()[0]]  # what does not exist is left out


def test_secret_modules_name_the_reference_and_the_quiz_key():
    assert assignment.REFERENCE_PACKAGE in policy.SECRET_MODULES
    assert assignment.QUIZ_KEY_MODULE in policy.SECRET_MODULES


def test_a_covered_package_is_not_a_leak(tmp_path, monkeypatch):
    """A package folder covered by an empty one is still found, as an empty namespace package."""
    (tmp_path / "covered").mkdir()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "__init__.py").write_text("SECRET = 1\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert probe([], ["covered", "full"]) == ["the module full can be imported"]


def test_a_view_with_a_gpus_device_nodes_says_so():
    """confinement.confine lifts the address-space limit only for such a view: CUDA cannot start under one."""
    assert View((), (), ("/dev/null", "/dev/nvidiactl", "/dev/nvidia0")).gpu
    assert not View((), (), ("/dev/null", "/dev/urandom")).gpu
