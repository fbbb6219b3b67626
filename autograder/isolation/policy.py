"""What a sandbox may see: one decision, for every way this package can be installed.

A sandbox sees an allow-list of the file system, bound read-only: the system
folders, a few files of /etc, /sys, Python's own folders and the site folders
on `sys.path` (where torch and the other packages live). Nothing else exists
for it: not the project checkout, the grader's home or working folder, the
reports, other students' work, the nbgrader course.

Inside that view, every place the reference, the graders or the quiz key could
be read or imported from is covered: this package and the reference wherever
they are importable from (a checkout, an editable install, site-packages, a
wheel or zip on `sys.path`, `PYTHONPATH`, a `.pth` file), the checkout itself
when it lies within the view, and the `secrets` the caller names (the reports
folder, the submissions, the course).

`probe` is what a fresh sandbox runs against the same view before any
submission code: if it can reach any of it, grading stops.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import site
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from typing import Iterable

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "fonts", "alternatives",
             "passwd", "group", "nsswitch.conf", "os-release")
DEVICES = ("null", "zero", "full", "random", "urandom")
GPU_DEVICE_PREFIX = "nvidia"
# What must never be importable in a sandbox: the reference, the graders (and the quiz key with them).
SECRET_PACKAGES = ("attention_ref", "autograder")
SECRET_MODULES = ("attention_ref", "autograder.graders", "autograder.graders.quiz_key")


@dataclass(frozen=True)
class View:
    """The file system a sandbox sees."""

    expose: tuple[str, ...]  # bound read-only at the same path (folders or files); symlinks re-created
    hide: tuple[str, ...]  # within what is exposed, covered: folders by an empty one, files by an empty file
    devices: tuple[str, ...]  # device nodes bound into a private /dev
    probe_paths: tuple[str, ...]  # none of these may be readable from a sandbox
    probe_modules: tuple[str, ...] = SECRET_MODULES  # none of these may be importable from a sandbox


def sandbox_view(secrets: Iterable[str | os.PathLike] = ()) -> View:
    """The view for sandboxes forked from this interpreter, hiding `secrets` too."""
    secret_paths = {_real(p) for p in secrets} | set(_secret_locations())
    expose = set(_system_paths()) | set(_python_paths(secret_paths))
    hide = {s for s in secret_paths if any(inside(s, e) for e in expose)}
    # a path within an exposed one needs no mount of its own, unless something between them is hidden
    expose = {e for e in expose if not any(o != e and inside(e, o) and not any(inside(e, h) and inside(h, o)
                                                                                for h in hide) for o in expose)}
    devices = [f"/dev/{d}" for d in DEVICES if os.path.exists(f"/dev/{d}")]
    if os.path.isdir("/dev"):
        devices += sorted(f"/dev/{d}" for d in os.listdir("/dev") if d.startswith(GPU_DEVICE_PREFIX))
    probes = secret_paths | {_real(p) for p in _secret_files()}
    return View(tuple(sorted(expose)), tuple(sorted(hide)), tuple(devices), tuple(sorted(probes)))


def probe(view: View) -> list[str]:
    """What this process can reach that the view must hide; empty when all is well.

    Run inside a sandbox after it is confined, before it runs a line of a submission."""
    found = []
    for name in view.probe_modules:
        try:
            spec = importlib.util.find_spec(name)
        except Exception:  # noqa: BLE001 - a broken or hidden parent package: not importable
            continue
        if spec is not None and _has_content(spec):
            found.append(f"the module {name} can be imported")
    for path in view.probe_paths:
        on_the_way = {os.path.relpath(e, path).split("/")[0] for e in view.expose if inside(e, path) and e != path}
        try:
            if os.path.isdir(path):
                if set(os.listdir(path)) - on_the_way:  # only the folders leading to what is exposed
                    found.append(f"{path} can be listed")
            elif os.path.getsize(path) > 0:
                with open(path, "rb") as fh:
                    if fh.read(1):
                        found.append(f"{path} can be read")
        except OSError:
            pass
    return found


def _has_content(spec: importlib.machinery.ModuleSpec) -> bool:
    """Whether a found module has code to run: a file, or a package folder that is not empty (a
    covered package's empty folder is still found, as an empty namespace package)."""
    if spec.origin not in (None, "namespace") and os.path.isfile(spec.origin) and os.path.getsize(spec.origin) > 0:
        return True
    return any(os.path.isdir(p) and os.listdir(p) for p in (spec.submodule_search_locations or []))


# ---------------------------------------------------------------- the pieces


def _real(path: str | os.PathLike) -> str:
    return os.path.realpath(os.fspath(path))


def inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies beneath it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _system_paths() -> list[str]:
    paths = [p for p in SYSTEM_FOLDERS if os.path.lexists(p)]
    return paths + [f"/etc/{name}" for name in ETC_FILES if os.path.lexists(f"/etc/{name}")]


def _site_folders() -> set[str]:
    folders = set(site.getsitepackages()) if hasattr(site, "getsitepackages") else set()
    folders.add(site.getusersitepackages())
    folders |= {p for p in sys.path if os.path.basename(p.rstrip("/")) in ("site-packages", "dist-packages")}
    return {_real(f) for f in folders if f}


def _python_paths(secrets: set[str]) -> list[str]:
    """Python's own folders and site folders (their secret packages hidden one by one, even when
    they lie in a checkout, as a venv may), and the other `sys.path` entries that neither hold a
    secret nor lie in one (not a checkout's folders, whatever put them on the path)."""
    stdlib = [sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")]
    python = {_real(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *stdlib)
              if os.path.isdir(p)} | {s for s in _site_folders() if os.path.exists(s)}
    found = set(python)
    for entry in sys.path:
        if entry and os.path.exists(entry):
            real = _real(entry)
            if not any(inside(s, real) or inside(real, s) for s in secrets):
                found.add(real)
    return sorted(found)


def _secret_locations() -> list[str]:
    """Every place the secret packages can be imported from, and the checkout around them."""
    found = []
    for name in SECRET_PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        found += [_real(p) for p in locations]
    for entry in sys.path:  # copies a spec would not show: a second install, a zip, a PYTHONPATH folder
        if not entry or not os.path.exists(entry):
            continue
        if os.path.isdir(entry):
            found += [_real(os.path.join(entry, n)) for n in SECRET_PACKAGES if os.path.isdir(os.path.join(entry, n))]
        elif zipfile.is_zipfile(entry) and _zip_holds_secret(entry):
            found.append(_real(entry))
    for package in list(found):  # a checkout: the reference's parent holds the tests, solutions and sources
        parent = os.path.dirname(package)
        if os.path.isdir(os.path.join(parent, "assignments")) and os.path.isfile(os.path.join(parent, "pyproject.toml")):
            found.append(parent)
    return sorted(set(found))


def _zip_holds_secret(path: str) -> bool:
    try:
        with zipfile.ZipFile(path) as archive:
            return any(n.split("/", 1)[0] in SECRET_PACKAGES for n in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return False


def _secret_files() -> list[str]:
    """Files whose reading would be a leak: a part of the reference, the quiz key."""
    found = []
    for location in _secret_locations():
        for relative in ("masks.py", "graders/quiz_key.py", "attention_ref/masks.py", "autograder/graders/quiz_key.py"):
            path = os.path.join(location, relative)
            if os.path.isfile(path):
                found.append(path)
    return found
