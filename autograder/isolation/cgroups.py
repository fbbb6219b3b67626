"""A cgroup per sandbox, where the system has them: at most about one core of CPU, and limits on
processes and memory that count the sandbox's children too. So a student who starts forty busy
processes slows only their own checks, never another student's.

cgroup v1 (a hierarchy per controller, as here) is used when its cpu, pids and memory controllers
are writable; cgroup v2 when this process's cgroup already delegates those controllers to its
children. Otherwise sandboxes run without (`create` says why). The tree of one zygote is
`<own cgroup>/autograder-<PID namespace>-<pid>/` in each hierarchy (`tree_name`), a folder per sandbox
inside it.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path
from typing import Any

from . import identity
from .weakness import Gap, Weakness

ROOT = Path("/sys/fs/cgroup")
V1_CONTROLLERS = ("cpu", "pids", "memory")
CPU_PERIOD_US = 100_000  # a quota of one period per period: one core
V1_SHARES, V2_WEIGHT = 1024, 100  # one ordinary process's weight against its siblings (cpu.shares, cpu.weight)


def memory_limit() -> int | None:
    """This process's cgroup memory limit in bytes (a container's `--memory`, Gradescope's 768 MB), or None
    when it has none, or none can be read."""
    try:
        for line in open("/proc/self/cgroup").read().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "" and os.path.exists(f"/sys/fs/cgroup{path}/memory.max"):
                value = open(f"/sys/fs/cgroup{path}/memory.max").read().strip()
                return None if value == "max" else int(value)
            if "memory" in controllers.split(","):
                limit = int(open(f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes").read())
                return None if limit >= 2**60 else limit
    except (OSError, ValueError):
        return None
    return None


def create(name: str) -> tuple[dict | None, str]:
    """A tree for one zygote's sandboxes as plain data, or (None, why not, in a few words)."""
    own = _own_cgroups()
    if all((ROOT / c / "cgroup.procs").exists() for c in V1_CONTROLLERS):
        tree: dict[str, Any] = {"version": 1, "folders": {c: str(ROOT / c / own.get(c, "").lstrip("/") / name) for c in V1_CONTROLLERS}}
    elif (ROOT / "cgroup.controllers").exists():
        parent = ROOT / own.get("", "").lstrip("/")
        delegated = set((parent / "cgroup.subtree_control").read_text().split()) if (parent / "cgroup.subtree_control").exists() else set()
        if not {"cpu", "pids", "memory"} <= delegated:
            return None, "this cgroup v2 tree does not delegate cpu, pids and memory"
        tree = {"version": 2, "folders": {"": str(parent / name)}}
    else:
        return None, "no cgroups here"
    _remove_stale(tree)
    try:
        for folder in tree["folders"].values():
            os.makedirs(folder, exist_ok=True)
        if tree["version"] == 2:
            Path(tree["folders"][""], "cgroup.subtree_control").write_text("+cpu +pids +memory")
    except OSError as exc:
        remove_tree(tree)
        return None, f"cgroups not writable: {exc.strerror}"
    _weigh_as_cores(tree)
    return tree, ""


def _weigh_as_cores(tree: dict) -> None:
    """Give the tree, against the processes and groups beside it, the CPU weight of as many ordinary
    processes as this machine lets it use cores. With one process's weight, every sandbox of a run
    together got what one busy process beside them got: under two busy loops and a second run, a
    loaded sandbox waited seconds for the CPU to answer a request to fork a part (and a sandbox's
    wait shows in the kernel's count only once it runs, too late for its deadline)."""
    cores = len(os.sched_getaffinity(0))  # cgroups are Linux's: the call is always there
    file, value = (("cpu.shares", V1_SHARES * cores) if tree["version"] == 1 else ("cpu.weight", min(10_000, V2_WEIGHT * cores)))
    try:
        Path(tree["folders"]["cpu" if tree["version"] == 1 else ""], file).write_text(str(value))
    except OSError:
        pass  # the default weight: slower under load, never wrong (deadlines count the waiting they see)


def join(tree: dict, name: str, processes: int, memory_bytes: int) -> list[Weakness]:
    """Move this process into a new cgroup `name` of `tree`, with its limits; what did not hold."""
    try:
        for controller, folder in tree["folders"].items():
            path = Path(folder, name)
            path.mkdir(exist_ok=True)
            for file, value in _limits(tree["version"], controller, processes, memory_bytes):
                (path / file).write_text(value)
            (path / "cgroup.procs").write_text("0")  # this process, and its children from now on
    except OSError as exc:
        return [Weakness(Gap.LIMITS, f"no CPU share for this sandbox ({exc.strerror})")]
    return []


def _limits(version: int, controller: str, processes: int, memory_bytes: int) -> list[tuple[str, str]]:
    if version == 2:
        return [("cpu.max", f"{CPU_PERIOD_US} {CPU_PERIOD_US}"), ("pids.max", str(processes)),
                ("memory.max", str(memory_bytes))]
    return {"cpu": [("cpu.cfs_period_us", str(CPU_PERIOD_US)), ("cpu.cfs_quota_us", str(CPU_PERIOD_US))],
            "pids": [("pids.max", str(processes))],
            "memory": [("memory.limit_in_bytes", str(memory_bytes))]}[controller]


def remove(tree: dict, name: str) -> bool:
    """Remove the (empty) cgroup `name`; False while a process is still in it."""
    done = True
    for folder in tree["folders"].values():
        try:
            os.rmdir(Path(folder, name))
        except FileNotFoundError:
            pass
        except OSError as exc:
            if exc.errno != errno.EBUSY:
                raise
            done = False
    return done


def remove_tree(tree: dict, patience_seconds: float = 5.0) -> None:
    """Remove every cgroup of `tree` once its processes are gone (they die with the zygote's PID
    namespace, a moment after it)."""
    deadline = time.monotonic() + patience_seconds
    for folder in tree["folders"].values():
        names = [p.name for p in Path(folder).iterdir() if p.is_dir()] if Path(folder).is_dir() else []
        for name in names:
            while not remove(tree, name) and time.monotonic() < deadline:
                time.sleep(0.01)
        try:
            os.rmdir(folder)
        except OSError:
            pass


def tree_name() -> str:
    """The name of this process's tree: its pid, and the PID namespace that pid is of, so that a run in
    another namespace (a container that shares the host's cgroups) never takes a live tree for a stale one."""
    return f"{_namespace_prefix()}{os.getpid()}"


def _namespace_prefix() -> str:
    """What the names of every tree of this PID namespace begin with."""
    return f"autograder-{identity.pid_namespace()}-"


def _remove_stale(tree: dict) -> None:
    """Trees of zygotes of this PID namespace that are gone (their grader was killed before it could clean
    up), as far as this process may remove them. A tree it may not touch (a read-only cgroup file system, as
    in a Docker container that sees the host's cgroups; another user's tree) is left: another run's
    leftovers never stop this one."""
    own = _namespace_prefix()
    for folder in tree["folders"].values():
        parent = Path(folder).parent
        for stale in parent.glob(f"{own}*") if parent.is_dir() else []:
            pid = stale.name.removeprefix(own)
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                try:
                    remove_tree({"version": tree["version"], "folders": {"": str(stale)}}, patience_seconds=0)
                except OSError:
                    pass


def _own_cgroups() -> dict[str, str]:
    """controller -> this process's cgroup path ("" for the v2 tree)."""
    found = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found
