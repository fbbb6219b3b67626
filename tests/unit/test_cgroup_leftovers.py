"""Another run's leftover cgroups never stop a run, and a run removes only what it can tell is stale.

A grader killed before it could clean up leaves its tree (`autograder-<PID namespace>-<pid>`); the next run
removes it when that pid is gone from its own PID namespace. Where the tree cannot be removed (a Docker
container sees the host's cgroups read-only), the run goes on: before, its zygote died at start.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.isolation import cgroups, identity


def _dead_pid() -> int:
    """A pid no process of this namespace has now (one that has just ended)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _fake_v1_root(root: Path) -> None:
    for controller in cgroups.V1_CONTROLLERS:
        (root / controller).mkdir(parents=True)
        (root / controller / "cgroup.procs").write_text("")


def test_a_leftover_that_cannot_be_removed_is_left_and_the_run_goes_on(tmp_path, monkeypatch):
    _fake_v1_root(tmp_path)
    monkeypatch.setattr(cgroups, "ROOT", tmp_path)
    monkeypatch.setattr(cgroups, "_own_cgroups", lambda: {})
    stale = f"autograder-{identity.pid_namespace()}-{_dead_pid()}"
    for controller in cgroups.V1_CONTROLLERS:
        (tmp_path / controller / stale / "sandbox-3").mkdir(parents=True)

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(cgroups.os, "rmdir", read_only)
    monkeypatch.setattr(cgroups.os, "makedirs", read_only)
    tree, why_not = cgroups.create(cgroups.tree_name())
    assert tree is None and "not writable" in why_not
    assert all((tmp_path / controller / stale / "sandbox-3").is_dir() for controller in cgroups.V1_CONTROLLERS)


def test_only_this_namespace_s_trees_of_gone_processes_are_removed():
    own = cgroups._own_cgroups()
    if not all(os.access(cgroups.ROOT / c / own.get(c, "").lstrip("/"), os.W_OK) for c in cgroups.V1_CONTROLLERS):
        pytest.skip("no writable cgroup v1 tree here")
    namespace = identity.pid_namespace()
    names = {"stale": f"autograder-{namespace}-{_dead_pid()}",
             "live": f"autograder-{namespace}-{os.getppid()}",
             "other namespace": f"autograder-{namespace + 1}-{_dead_pid()}"}
    parents = [cgroups.ROOT / c / own.get(c, "").lstrip("/") for c in cgroups.V1_CONTROLLERS]
    for parent in parents:
        for name in names.values():
            (parent / name / "sandbox-1").mkdir(parents=True, exist_ok=True)
    tree, why_not = cgroups.create(cgroups.tree_name())
    try:
        assert tree is not None, why_not
        left = {kind for kind, name in names.items() if all((parent / name).exists() for parent in parents)}
        assert left == {"live", "other namespace"}
    finally:
        if tree is not None:
            cgroups.remove_tree(tree)
        for parent in parents:
            for name in names.values():
                cgroups.remove_tree({"version": 1, "folders": {"": str(parent / name)}}, patience_seconds=0)
