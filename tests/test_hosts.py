"""The grader on the hosts courses grade on (tests/hosts.py): Docker's default privileges, an ordinary user
without user namespaces, Gradescope's limits (half a CPU, 768 MB) and a real container started by runc.

On each, as the README's grading command runs it: the run's first line says which isolation it uses, a
correct submission earns full marks, and the tarpit (loops at import and in a function) costs what it
costs on this machine's own host. The adversarial suite runs on each of them too (tests/test_adversarial.py,
`AUTOGRADER_TEST_HOSTS`). A host this machine cannot emulate is skipped, saying why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hosts
from adversarial import tarpit

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
# name: (tests/hosts.py's kind, its limits, the isolation the run's first line must name)
HOSTS = {"docker": ("docker", {}, "Landlock"), "user": ("user", {}, "Landlock"),
         "gradescope": ("docker", {"cpu": 0.5, "memory": "768M"}, "Landlock"), "container": ("runc", {}, "Landlock")}
TIMEOUT = 3


@pytest.fixture(params=list(HOSTS))
def host(request) -> tuple[str, list[str]]:
    kind, limits, _ = HOSTS[request.param]
    why = hosts.available(kind) or (hosts.limits_available() if limits else "")
    if why:
        pytest.skip(f"cannot emulate {request.param} here: {why}")
    return request.param, hosts.command(kind, [], **limits)


@pytest.fixture
def work() -> Path:
    """A folder every host's grader can write in (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="hosts-", dir="/tmp"))
    folder.chmod(0o777)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def test_a_correct_submission_earns_full_marks_and_the_run_says_how_it_is_isolated(host, work):
    name, prefix = host
    (work / "base.py").write_text(tarpit.BASE)
    out = work / "out"
    run = subprocess.run([*prefix, sys.executable, "-m", "autograder", "grade", str(work / "base.py"), "--out", str(out),
                          "--jobs", "1"], capture_output=True, text=True, cwd=ROOT,
                         env={**_env(), "AUTOGRADER_SECRET": "hosts"}, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    first = run.stderr.splitlines()[0]
    assert first.startswith(f"isolation: {HOSTS[name][2]}"), run.stderr[:2000]
    tests = json.loads((out / "base" / "results.json").read_text())["tests"]
    assert tests and all(t["score"] == t["max_score"] for t in tests if not t["name"].startswith("quiz/")), \
        [t["name"] for t in tests if t["score"] != t["max_score"]]


def test_the_tarpit_costs_what_it_costs_elsewhere(host, work):
    _, prefix = host
    result = tarpit.grade(tarpit.write_class(work / "subs"), work / "out", TIMEOUT, ("masks", "scaling", "quiz"), jobs=1,
                          env=_env(), prefix=prefix, wall=900)
    assert result["returncode"] == 0, result["stderr"][-3000:]
    assert tarpit.wrong_scores(result["reports"]) == {}
    seconds = {sid: report["own_seconds"] for sid, report in result["reports"].items()}
    slow = {sid: seconds[sid] for sid in tarpit.LOOPERS
            if seconds[sid] > tarpit.looper_bound(seconds["base_again"], TIMEOUT)}
    assert not slow, (seconds["base_again"], slow)


def test_another_run_s_leftover_cgroups_never_stop_a_run_in_a_container(work):
    """A grader killed before it cleaned up leaves its cgroup tree; in a container that sees the host's cgroups
    read-only, the next run can neither remove it nor use cgroups, and grades without them (before, its zygote
    died at start)."""
    why = hosts.available("docker")
    if why:
        pytest.skip(f"cannot emulate docker here: {why}")
    from autograder.isolation import cgroups, identity

    own = cgroups._own_cgroups()
    parents = [cgroups.ROOT / c / own.get(c, "").lstrip("/") for c in cgroups.V1_CONTROLLERS]
    if not all(os.access(parent, os.W_OK) for parent in parents):
        pytest.skip("no writable cgroup v1 tree here to leave a stale one in")
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    name = f"autograder-{identity.pid_namespace()}-{gone.pid}"  # the namespace the container shares
    # A process kept in the stale tree: a grading run on the host beside this test (another test file) would
    # otherwise remove the tree as its own namespace's leftover before the container's run meets it.
    holder = subprocess.Popen(["sleep", "600"])
    try:
        for parent in parents:
            (parent / name / "sandbox-1").mkdir(parents=True)
            (parent / name / "sandbox-1" / "cgroup.procs").write_text(str(holder.pid))
        (work / "base.py").write_text(tarpit.BASE)
        run = subprocess.run([*hosts.command("docker", []), sys.executable, "-m", "autograder", "grade",
                              str(work / "base.py"), "--out", str(work / "out"), "--jobs", "1", "--parts", "masks"],
                             capture_output=True, text=True, cwd=ROOT, env={**_env(), "AUTOGRADER_SECRET": "hosts"},
                             timeout=900)
        assert run.returncode == 0, run.stderr[-3000:]
        assert "no cgroup each" in run.stderr.splitlines()[0], run.stderr[:2000]
    finally:
        holder.kill()
        holder.wait()
        for parent in parents:
            cgroups.remove_tree({"version": 1, "folders": {"": str(parent / name)}}, patience_seconds=5)


def _sandbox_uids() -> dict[int, set[str]]:
    """uid -> the PID namespaces of its processes, for every process that runs under a sandbox's uid now."""
    from autograder.isolation import identity

    found: dict[int, set[str]] = {}
    for entry in os.listdir("/proc"):
        try:
            uid = int(Path(f"/proc/{entry}/status").read_text().split("Uid:\t")[1].split()[0])
            namespace = os.readlink(f"/proc/{entry}/ns/pid")
        except (OSError, IndexError, ValueError):
            continue
        if uid >= identity.SANDBOX_UID_BASE:
            found.setdefault(uid, set()).add(namespace)
    return found


def test_two_containers_grading_at_once_never_share_a_sandbox_uid(work):
    """Each container numbers its processes from 1, so the same pid is a sandbox in both: the uid must still
    differ, or one student's processes count against the other's process limit (a fork storm stops its forks)."""
    why = hosts.available("runc")
    if why:
        pytest.skip(f"cannot emulate a container here: {why}")
    runs = []
    for name in ("a", "b"):
        (work / f"{name}.py").write_text(tarpit.BASE)
        runs.append(subprocess.Popen([*hosts.command("runc", []), sys.executable, "-m", "autograder", "grade",
                                      str(work / f"{name}.py"), "--out", str(work / f"out-{name}"), "--jobs", "1",
                                      "--parts", "masks"], cwd=ROOT, env={**_env(), "AUTOGRADER_SECRET": "hosts"},
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    seen: dict[int, set[str]] = {}
    while running := [run for run in runs if run.poll() is None]:  # sampled as they grade
        for uid, namespaces in _sandbox_uids().items():
            seen.setdefault(uid, set()).update(namespaces)
        try:
            running[0].wait(timeout=0.02)
        except subprocess.TimeoutExpired:
            pass
    for run in runs:
        assert run.wait() == 0, run.stderr.read()[-3000:]
    assert len(seen) >= 2, seen  # both containers' sandboxes were seen
    assert not {uid: ns for uid, ns in seen.items() if len(ns) > 1}
