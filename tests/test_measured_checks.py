"""The tiles checks that measure what a call caused, the memory tiled_attention uses and the work its causal
call does, against every way around them that a round of attacks found (tests/adversarial/measured/), beside
the corpus's correct tiles versions: on every path a class is graded on (the local pool, a Dask cluster, the
Landlock tier of a host without namespaces, Gradescope's run on its limits), and the same verdicts on every
run, idle or beside two busy loops (docs/measured-checks.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import hosts

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
ATTACKS = ROOT / "tests" / "adversarial" / "measured"
SECRET = "measured-twice"
MEMORY, WORK = "tiled_attention: right at T", "tiled_attention: causal skips"
# a correct version: both points; every way around a check: neither (except where it says which it keeps)
VALID = {"correct": "", **{name: (CORPUS / "valid" / f"tiles_{name}.py").read_text()
                           for name in ("broadcast_shapes", "float64_accumulators", "einops_numpy_masks")}}
CONTROLS = {"whole_grid": (CORPUS / "buggy" / "tiles_whole_grid.py").read_text(),
            "grid_through_sdpa": (CORPUS / "buggy" / "tiles_grid_through_sdpa.py").read_text()}
WAYS_AROUND = {path.stem: path.read_text() for path in sorted(ATTACKS.glob("*.py"))}
KEEPS = {"both_sides_of_the_ratio": MEMORY}  # it computes block by block: only the work is out of place
# The attacks of the round that filed the issue, and their control, on Gradescope's run (an upload per run).
ON_GRADESCOPE = ("correct", "whole_grid", "kept_from_warmup", "workspace_from_import", "both_sides_of_the_ratio")
BUSY_ROUNDS = int(os.environ.get("AUTOGRADER_MEASURED_ROUNDS", "2"))


def _expected(name: str) -> dict[str, bool]:
    """Whether `name` earns the memory point and the work point."""
    if name in VALID:
        return {MEMORY: True, WORK: True}
    return {MEMORY: KEEPS.get(name) == MEMORY, WORK: KEEPS.get(name) == WORK}


@pytest.fixture(scope="module")
def work() -> Path:
    """The submissions, in a folder every host's grader can read and write in (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="measured-", dir="/tmp"))
    folder.chmod(0o777)
    subs = folder / "subs"
    subs.mkdir()
    base = (CORPUS / "base.py").read_text()
    for name, patch in {**VALID, **CONTROLS, **WAYS_AROUND}.items():
        (subs / f"{name}.py").write_text(base + "\n\n" + patch)
    yield folder
    subprocess.run(["rm", "-rf", str(folder)], check=False)


def _verdicts(results: Path) -> dict[str, bool]:
    """Whether the memory and the work check passed, from a results.json."""
    tests = json.loads(results.read_text())["tests"]
    return {key: next(t["score"] > 0 for t in tests if t["name"].startswith(f"tiles/{key}")) for key in (MEMORY, WORK)}


def _grade(work: Path, out: Path, *extra: str, prefix: tuple[str, ...] = ()) -> dict[str, dict[str, bool]]:
    run = subprocess.run([*prefix, sys.executable, "-m", "autograder", "grade", *sorted(map(str, (work / "subs").glob("*.py"))),
                          "--out", str(out), "--parts", "tiles", "--secret", SECRET, "--quiet", *extra],
                         capture_output=True, text=True, timeout=900, cwd=ROOT,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    assert run.returncode == 0, run.stderr[-3000:]
    return {path.parent.name: _verdicts(path) for path in out.glob("*/results.json")}


def _gradescope(work: Path, name: str) -> dict[str, bool]:
    """`name` uploaded alone, graded as Gradescope runs the zip (`gradescope --run`), on its limits."""
    why = hosts.available("docker") or hosts.limits_available()
    if why:
        pytest.skip(f"cannot emulate Gradescope's host here: {why}")
    root = work / f"gradescope-{name}"
    (root / "source").mkdir(parents=True)
    (root / "submission").mkdir()
    (root / "source" / "gradescope.json").write_text(json.dumps({"visibility": "visible"}))
    (root / "source" / "secret.txt").write_text(SECRET + "\n")
    shutil.copy(work / "subs" / f"{name}.py", root / "submission" / f"{name}.py")
    subprocess.run(["chmod", "-R", "a+rwX", str(root)], check=True)
    command = hosts.command("docker", [sys.executable, "-m", "autograder", "gradescope", "--run", str(root)],
                            cpu=0.5, memory="768M")
    run = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    return _verdicts(root / "results" / "results.json")


@pytest.fixture(scope="module")
def idle(work) -> dict[str, dict[str, bool]]:
    return _grade(work, work / "out-idle")


PATHS = ("local", "dask", "landlock", "container", "gradescope")


@pytest.mark.parametrize("path", PATHS)
def test_every_way_around_fails_and_every_correct_version_passes(path, work, idle):
    if path == "local":
        verdicts = idle
    elif path == "dask":
        verdicts = _grade(work, work / "out-dask", "--dask", "local:2")
    elif path == "landlock":  # Docker's default privileges: no namespaces, so Landlock and a uid of its own
        why = hosts.available("docker")
        if why:
            pytest.skip(f"cannot emulate a host without namespaces here: {why}")
        verdicts = _grade(work, work / "out-landlock", prefix=tuple(hosts.command("docker", [])))
    elif path == "container":  # a real container's root, without CAP_SYS_PTRACE: it reads the counts as their owner
        why = hosts.available("runc")
        if why:
            pytest.skip(f"cannot start a container here: {why}")
        verdicts = _grade(work, work / "out-container", prefix=tuple(hosts.command("runc", [])))
    else:
        verdicts = {name: _gradescope(work, name) for name in ON_GRADESCOPE}
    assert verdicts == {name: _expected(name) for name in verdicts}
    assert set(verdicts) == set(ON_GRADESCOPE if path == "gradescope" else {**VALID, **CONTROLS, **WAYS_AROUND})


def test_the_verdicts_are_the_same_beside_two_busy_loops(work, idle):
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        rounds = [_grade(work, work / f"out-busy{i}") for i in range(BUSY_ROUNDS)]
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
    assert all(verdicts == idle for verdicts in rounds)
