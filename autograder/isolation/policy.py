"""What a sandbox may see: one decision, for every way this package can be installed.

A sandbox sees an allow-list of the file system, bound read-only: the system
folders, a few files of /etc, /sys, Python's own folders and the site folders
on `sys.path` (where torch and the other packages live). Nothing else exists
for it: not the project checkout, the grader's home or working folder, the
reports, other students' work, the nbgrader course.

Inside that view, every place the reference, the graders or the quiz key could
be read or imported from is covered (`View.hide`): this package and the reference
wherever they are importable from (a checkout, an editable install, site-packages,
a wheel or zip on `sys.path`, `PYTHONPATH`, a `.pth` file), and the checkout itself
when it lies within the view. The `secrets` the caller names (the reports folder,
the submissions, the course) are never named to a sandbox at all, not even as
something to hide: an exposed folder that holds one is exposed child by child,
around it. So what a sandbox is told (the view lives in the zygote's memory,
which every sandbox inherits) names no student and no report.

`probe` is what the grader has a fresh sandbox run, before any submission code,
on the paths and modules of `probe_targets`: if it can reach any of them,
grading is refused.
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

from .fields import JsonFields

SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys")
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone", "fonts", "alternatives",
             "passwd", "group", "nsswitch.conf", "os-release")
DEVICES = ("null", "zero", "full", "random", "urandom")
GPU_DEVICE_PREFIX = "nvidia"
# What must never be importable in a sandbox: the reference, the graders (and the quiz key with them).
SECRET_PACKAGES = ("attention_ref", "autograder")
SECRET_MODULES = ("attention_ref", "autograder.graders", "autograder.graders.quiz_key")


@dataclass(frozen=True)
class View(JsonFields):
    """The file system a sandbox sees (plain data: it travels to the zygote as JSON, in a `SandboxConfig`)."""

    expose: tuple[str, ...]  # bound read-only at the same path (folders or files); symlinks re-created
    hide: tuple[str, ...]  # within what is exposed, covered: folders by an empty one, files by an empty file
    devices: tuple[str, ...]  # device nodes bound into a private /dev

    @property
    def gpu(self) -> bool:
        """Whether a GPU's device nodes are bound in, so that CUDA may start in a sandbox."""
        return any(os.path.basename(d).startswith(GPU_DEVICE_PREFIX) for d in self.devices)


def sandbox_view(secrets: Iterable[str | os.PathLike] = ()) -> View:
    """The view for sandboxes forked from this interpreter, `secrets` left out of it."""
    roster = {_real(p) for p in secrets}
    packages = set(_secret_locations())
    expose = set(_system_paths()) | set(_python_paths(roster | packages))
    hide = {s for s in packages if any(inside(s, e) for e in expose)}
    # a path within an exposed one needs no mount of its own, unless something between them is hidden
    expose = {e for e in expose if not any(o != e and inside(e, o) and not any(inside(e, h) and inside(h, o)
                                                                                for h in hide) for o in expose)}
    expose = set(around(sorted(expose), roster))
    devices = [f"/dev/{d}" for d in DEVICES if os.path.exists(f"/dev/{d}")]
    if os.path.isdir("/dev"):
        devices += sorted(f"/dev/{d}" for d in os.listdir("/dev") if d.startswith(GPU_DEVICE_PREFIX))
    return View(tuple(sorted(expose)), tuple(sorted(hide)), tuple(devices))


def probe_targets(secrets: Iterable[str | os.PathLike] = ()) -> tuple[list[list], list[str]]:
    """([path, device, inode] of each that exists, modules) that no sandbox may read or import: the
    caller's secrets, every location of the reference and the graders, the files whose reading would be
    a leak. The identity tells the very folder from a private one at the same path (a sandbox's /tmp)."""
    paths = {_real(p) for p in secrets} | set(_secret_locations()) | {_real(p) for p in _secret_files()}
    targets = []
    for path in sorted(paths):
        try:
            info = os.stat(path)
        except OSError:
            continue
        targets.append([path, info.st_dev, info.st_ino])
    return targets, list(SECRET_MODULES)


def probe(targets: list[list], modules: list[str]) -> list[str]:
    """What this process can read or import of `targets` ([path, device, inode]) and `modules`;
    empty when all is well.

    Run inside a fresh sandbox after it is confined, before it runs a line of a submission. It
    tries for real (opens, lists, reads a byte): under Landlock a file may be found yet unreadable.
    A path that is not the same file or folder as the grader's (an empty folder on the way to what is
    exposed, the sandbox's own /tmp) hides nothing."""
    found = []
    for name in modules:
        try:
            spec = importlib.util.find_spec(name)
        except Exception:  # noqa: BLE001 - a broken or hidden parent package: not importable
            continue
        if spec is not None and _has_content(spec):
            found.append(f"the module {name} can be imported")
    for path, device, inode in targets:
        try:
            info = os.stat(path)
            if (info.st_dev, info.st_ino) != (device, inode):
                continue
            if os.path.isdir(path):
                if os.listdir(path):
                    found.append(f"{path} can be listed")
            elif _readable(path):
                found.append(f"{path} can be read")
        except OSError:
            pass
    return found


def _readable(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return bool(fh.read(1))
    except OSError:
        return False


def _has_content(spec: importlib.machinery.ModuleSpec) -> bool:
    """Whether a found module has code that can be read: a file, or a package folder that is not empty
    (a covered package's empty folder is still found, as an empty namespace package)."""
    if spec.origin not in (None, "namespace") and _readable(spec.origin):
        return True
    for folder in spec.submodule_search_locations or []:
        try:
            if os.path.isdir(folder) and os.listdir(folder):
                return True
        except OSError:
            pass
    return False


def around(expose: list[str], roster: set[str]) -> list[str]:
    """`expose` with every folder that holds a path of `roster` replaced by its children, recursively,
    that path itself left out: the view never names what it must not show, and an allow-list
    (Landlock's) can leave out what lies within what it allows."""
    result = []
    for path in expose:
        result += _expose_without(path, roster) if any(inside(r, path) for r in roster) else [path]
    return result


def _expose_without(folder: str, roster: set[str]) -> list[str]:
    if folder in roster or not os.path.isdir(folder) or os.path.islink(folder):
        return []
    found = []
    try:
        children = sorted(os.listdir(folder))
    except OSError:
        return []
    for name in children:
        child = os.path.join(folder, name)
        if any(inside(r, child) for r in roster):
            found += _expose_without(child, roster)
        elif not os.path.islink(child) or not any(inside(r, _real(child)) or inside(_real(child), r) for r in roster):
            found.append(child)  # a link is allowed as what it leads to (Landlock's rule is on the target)
    return found


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
    secret nor lie in one (not a checkout's folders, whatever put them on the path), nor are the
    working folder or the running script's (the instructor's folders, not Python's)."""
    stdlib = [sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")]
    python = {_real(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, *stdlib)
              if os.path.isdir(p)} | {s for s in _site_folders() if os.path.exists(s)}
    found = set(python)
    here = {_real(os.getcwd()), _real(os.path.dirname(os.path.abspath(sys.argv[0]))) if sys.argv and sys.argv[0] else ""}
    for entry in sys.path:
        if entry and os.path.exists(entry) and _real(entry) not in here:
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
