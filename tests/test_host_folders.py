"""The `user` host of tests/hosts.py reaches a checkout wherever it was cloned.

A clone made in `mktemp -d` lies in a folder only root may enter: the ordinary user (uid 1000) the `user`
host runs as could not run the clone's Python (`make test` there: every test on that host failed at exec).
The launcher opens such folders for it in its own mount namespace only (the folders' real modes stay as
they are), and where the files themselves are their owner's alone (a umask of 077) `available` says why and
the host is skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hosts

ROOT = Path(__file__).resolve().parent.parent


def _tree(base: Path, modes: dict[str, int]) -> dict[str, Path]:
    """Folders under `base`, each with its mode (outer first), and a module file, mode 644, in the last."""
    base.mkdir(exist_ok=True)
    made = {}
    for relative in modes:
        folder = base / relative
        folder.mkdir()
        made[relative] = folder
    for folder, mode in zip(made.values(), modes.values()):
        folder.chmod(mode)
    module = list(made.values())[-1] / "module.py"
    module.write_text("X = 1\n")
    module.chmod(0o644)
    made["module"] = module
    return made


def test_a_folder_above_an_install_that_others_cannot_pass_is_opened_711_and_no_other(tmp_path):
    tree = _tree(tmp_path, {"closed": 0o700, "closed/open": 0o755, "closed/open/install": 0o755,
                            "closed/open/install/inner": 0o700})
    opened = hosts._closed_folders([tree["closed/open/install"]])
    assert opened[tree["closed"]] == 0o711, opened
    assert opened[Path("/root")] == 0o755, opened  # as before: the user's home is made there
    for untouched in ("closed/open", "closed/open/install", "closed/open/install/inner"):
        assert tree[untouched] not in opened, (untouched, opened)
    assert all(os.stat(folder).st_mode & 0o001 == 0 for folder in opened if folder != Path("/root")), opened
    depths = [len(folder.parts) for folder in opened]
    assert depths == sorted(depths), opened  # outer first: an inner one is found through the outer


def test_an_install_others_cannot_list_is_opened_755(tmp_path):
    for mode in (0o700, 0o711):
        tree = _tree(tmp_path / oct(mode), {"install": mode})
        assert hosts._closed_folders([tree["install"]])[tree["install"]] == 0o755


def test_reading_needs_the_closed_folders_opened_and_files_of_a_umask_of_077_are_refused(tmp_path):
    tree = _tree(tmp_path, {"closed": 0o700, "closed/install": 0o755, "closed/install/package": 0o755})
    wanted = {"the grader": (tree["module"], 0o004)}
    opened = hosts._closed_folders([tree["closed/install"]])
    assert hosts._unreadable(wanted, opened) == ""
    why = hosts._unreadable(wanted, {})
    assert f"{tree['closed']} is mode 700" in why, why
    tree["module"].chmod(0o600)
    why = hosts._unreadable(wanted, opened)
    assert "the grader" in why and f"{tree['module']} is mode 600" in why, why
    tree["module"].chmod(0o644)
    tree["closed/install/package"].chmod(0o711)  # passed, not listed: imports list it
    why = hosts._unreadable(wanted, opened)
    assert f"{tree['closed/install/package']} is mode 711" in why, why


def _copy(base: Path) -> Path:
    """What the `user` host's launcher and a grader import need (tests/hosts.py, autograder/) copied to `base`."""
    base.mkdir(exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "autograder", base / "autograder", ignore=ignore)
    (base / "tests").mkdir()
    shutil.copy2(ROOT / "tests" / "hosts.py", base / "tests" / "hosts.py")
    return base


def _available(copy: Path) -> str:
    """The copy's own `hosts.available("user")`, as its tests would ask it."""
    ask = f"import sys; sys.path.insert(0, {str(copy / 'tests')!r}); import hosts; print(hosts.available('user'))"
    run = subprocess.run([sys.executable, "-c", ask], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout.strip()


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["inside", "straight"])
def test_a_checkout_in_a_folder_only_root_may_enter_is_reached_by_the_user_host_and_the_folder_is_unchanged(layout):
    """`inside`: cloned into `mktemp -d`/repo; `straight`: cloned into `mktemp -d` itself (the checkout, the
    grader's working folder, is then the opened folder)."""
    why = hosts.available("user")
    if why:
        pytest.skip(f"cannot emulate the user host here: {why}")
    temp = Path(tempfile.mkdtemp(prefix="host-folders-"))  # mode 700, as `mktemp -d` makes it
    try:
        copy = _copy(temp / "repo" if layout == "inside" else temp)
        assert os.stat(temp).st_mode & 0o777 == 0o700
        # the control: without the launcher, the ordinary user cannot even list the checkout
        listing = subprocess.run(["ls", str(copy)], user=hosts.USER_ID, group=hosts.USER_ID, extra_groups=[],
                                 capture_output=True, text=True, timeout=60)
        assert listing.returncode != 0, listing

        assert _available(copy) == ""
        probe = ("import os, sys; sys.path.insert(0, os.getcwd()); import autograder.isolation.seccomp as s; "
                 f"print(os.getuid(), s.__file__, oct(os.stat({str(temp)!r}).st_mode & 0o777), "
                 "'tests' in os.listdir('.'))")
        launcher = copy / "tests" / "hosts.py"
        run = subprocess.run([sys.executable, str(launcher), "user", "--", sys.executable, "-c", probe],
                             capture_output=True, text=True, cwd=copy, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        uid, module, mode_inside, listed = run.stdout.split()
        assert int(uid) == hosts.USER_ID
        assert Path(module) == copy / "autograder" / "isolation" / "seccomp.py"
        assert mode_inside == ("0o711" if layout == "inside" else "0o755")
        assert listed == "True"  # its working folder, the checkout, listed as the grader lists it

        # the folder itself, and this machine's mounts, as they were
        assert os.stat(temp).st_mode & 0o777 == 0o700
        assert str(temp) not in Path("/proc/self/mountinfo").read_text()
        assert os.stat(copy / "autograder").st_mode & 0o777 == 0o755

        # files made under a umask of 077: the host is skipped, saying why
        (copy / "autograder" / "__init__.py").chmod(0o600)
        why = _available(copy)
        assert "autograder" in why and "is mode 600" in why, why
    finally:
        shutil.rmtree(temp, ignore_errors=True)
