"""A normal, non-editable install of the project, built once per test process.

Used by tests/test_install.py and, with AUTOGRADER_TEST_INSTALL=wheel, by the adversarial suite.

The wheel is built from a copy of the checkout (`pip wheel --no-deps --no-build-isolation`, so the
checkout gets no build/ or egg-info), then installed with `pip install --no-deps --no-index` into a
fresh virtual environment made without pip. The pinned packages of requirements.lock are not
installed again: a .pth file adds the site-packages of the environment running the tests, which
`make` filled from the lock, after the fresh environment's own. A path in a .pth file is only
appended to sys.path (the .pth files inside it are not read), so the checkout's editable install
of this project is not active there: `attention_ref` and `autograder` come from the wheel alone.
It takes a few seconds and needs no network (installing the lock afresh would take minutes).
As root it is made in /opt, as a real install is not in /tmp (see `installed`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_IGNORED = shutil.ignore_patterns(".git", ".venv", "__pycache__", "build", "*.egg-info", ".demo", ".pytest_cache", ".mypy_cache",
                                  "gradebook.db*", "demo-out")


@dataclass(frozen=True)
class Installed:
    python: Path  # the fresh environment's interpreter
    site: Path  # its site-packages, where attention_ref and autograder now live
    wheel: Path
    seconds: float  # how long building and installing took

    def env(self, **extra: str) -> dict[str, str]:
        """An environment for running the installed grader: nothing points back at the checkout."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
        return {**env, **extra}


_built: dict[str, Installed] = {}


def installed(tmp_path_factory) -> Installed:
    """The install, built on first use in this test process (a session-wide cache shared by test modules).

    A real install does not live in /tmp, where a sandbox has a private folder of its own: as root the
    environment goes to a folder of its own in /opt (removed when the tests end), elsewhere to pytest's
    temporary folder."""
    if "wheel" not in _built:
        folder = _outside_tmp()
        _built["wheel"] = build(folder or tmp_path_factory.mktemp("installed"))
    return _built["wheel"]


def _outside_tmp() -> Path | None:
    if os.geteuid() != 0 or not os.path.isdir("/opt"):
        return None
    folder = Path(tempfile.mkdtemp(prefix="autograder-test-install-", dir="/opt"))
    folder.chmod(0o755)  # sandboxes run under uids of their own and must read Python's packages
    atexit.register(shutil.rmtree, folder, True)
    return folder


def build(folder: Path) -> Installed:
    start = time.perf_counter()
    pip_env = {**{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)},
               "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    source, wheels, venv = folder / "source", folder / "wheels", folder / "venv"
    shutil.copytree(ROOT, source, ignore=_IGNORED, symlinks=True)
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--quiet",
          "--wheel-dir", str(wheels), str(source)], pip_env, cwd=folder)
    (wheel,) = wheels.glob("*.whl")
    _run([_base_python(), "-m", "venv", "--without-pip", str(venv)], pip_env, cwd=folder)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
         pip_env, cwd=folder)
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, env=pip_env, cwd=folder).stdout.strip())
    (site / "_locked_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    shutil.rmtree(source)
    return Installed(python, site, wheel, time.perf_counter() - start)


def _base_python() -> str:
    """The interpreter this environment was made from (a venv is made from a real interpreter, not another venv's)."""
    base = getattr(sys, "_base_executable", "") or sys.executable
    return base if Path(base).exists() else sys.executable


def _run(command: list[str], env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
