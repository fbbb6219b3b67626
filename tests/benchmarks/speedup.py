"""Benchmark: what one speed-up buys, this checkout against another (the same code without it).

    .venv/bin/python tests/benchmarks/speedup.py OTHER [--measure run|gradebook] [--students 40]
                                                [--repeats 3] [--jobs 2] [--work DIR]

OTHER is a checkout of the project without the speed-up (`git worktree add /tmp/without HEAD`, the
speed-up reverted there). Builds one class as `bench` does (tools/bench.py), then times this checkout and
OTHER in turn, `--repeats` pairs (this, other, other, this, this, ...), each in its own interpreters:

* `run`: `python -m autograder grade --nbgrader attention --jobs N --force` on a fresh copy of the course
  (our side of `bench`): its wall time, and the CPU time of every process it started (this script is
  their subreaper, so that a process left to end on its own is counted too);
* `gradebook`: `gradebook.record` over the class in one process, a student per batch, with one
  `SharedEngines` for all (as the run's gradebook writer does when submissions come back one by one), on
  the reports of a first run: its CPU time (imports excluded).

Prints each pair, the medians, the median of the pairs' differences (in % of this checkout's time), and
whether the two wrote the same score in every grade cell. A busy machine stretches wall times far more
than CPU times: compare pairs, not rows far apart. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from autograder.assignment import ASSIGNMENT  # noqa: E402
from tools import bench  # noqa: E402
from tools import course as C  # noqa: E402

PR_SET_CHILD_SUBREAPER = 36

RECORD = r"""
import json, sys, time
from pathlib import Path
from autograder.nbgrader import gradebook
from autograder.nbgrader.course import open_course
import nbconvert, nbgrader.converters, nbgrader.preprocessors  # imported before the clock starts

course = open_course(sys.argv[1], Path(sys.argv[2]))
reports = Path(sys.argv[3])
shared = {"engines": gradebook.SharedEngines()} if hasattr(gradebook, "SharedEngines") else {}
start = time.process_time()
for student in sorted(course.submissions()):
    update = gradebook.record(course, reports, [student], **shared)
    assert update.written == [student], update
for engines in shared.values():
    engines.close()
print(json.dumps({"cpu_s": time.process_time() - start}))
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _reap(seconds: float = 10.0) -> None:
    """Wait for what the run left behind (its processes come here once their parents are gone)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                time.sleep(0.05)
        except ChildProcessError:
            return


def _env(course: C.Course, tree: Path) -> dict[str, str]:
    return {**course.env(), "AUTOGRADER_SECRET": bench.SECRET, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}


def one(tree: Path, measure: str, built: C.Course, work: Path, jobs: int, reports: Path | None) -> dict:
    """One timing of `tree`'s code on a fresh copy of the class."""
    course = C.Course.open(work / "copy", built.course_id)
    shutil.rmtree(course.work, ignore_errors=True)
    shutil.copytree(built.work, course.work, symlinks=True)
    if measure == "run":
        command = [sys.executable, "-m", "autograder", "grade", "--nbgrader", ASSIGNMENT, "--out",
                   str(course.work / "reports"), "--jobs", str(jobs), "--force"]
    else:
        command = [sys.executable, "-c", RECORD, ASSIGNMENT, str(course.root), str(reports)]
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(command, cwd=course.root, env=_env(course, tree), capture_output=True, text=True)
    wall = time.perf_counter() - start
    _reap()
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    found = {"wall_s": wall, "cpu_s": _children_cpu() - cpu if measure == "run" else json.loads(proc.stdout)["cpu_s"],
             "scores": C.gradebook_part_scores(course.root / "gradebook.db")}
    if measure == "run" and reports is not None and not reports.exists():
        shutil.copytree(course.work / "reports", reports)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("other", type=Path, help="a checkout without the speed-up")
    parser.add_argument("--measure", choices=("run", "gradebook"), default="run")
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: a temporary one, removed)")
    args = parser.parse_args(argv)
    ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    work = args.work or Path(tempfile.mkdtemp(prefix="speedup-"))
    trees = {"this": ROOT, "other": args.other.resolve()}
    built = C.set_up_class(work / "class", bench.class_of(args.students), course_id="bench")
    reports = work / "reports"
    if args.measure == "gradebook":
        one(ROOT, "run", built, work, args.jobs, reports)  # our reports, for record() to read
    key = "cpu_s"
    times: dict[str, list[float]] = {"this": [], "other": []}
    walls: dict[str, list[float]] = {"this": [], "other": []}
    scores = {}
    print(f"{args.measure}, {args.students} students; this = {ROOT}, other = {trees['other']}; "
          f"machine: {C.environment_note()}", flush=True)
    for pair in range(1, args.repeats + 1):
        for name in ("this", "other") if pair % 2 else ("other", "this"):  # ABBA: neither always goes first
            found = one(trees[name], args.measure, built, work, args.jobs, reports)
            times[name].append(found[key])
            walls[name].append(found["wall_s"])
            scores.setdefault(name, found["scores"])
        print(f"  pair {pair}: this {times['this'][-1]:.2f} CPU-s ({walls['this'][-1]:.1f} s), other "
              f"{times['other'][-1]:.2f} CPU-s ({walls['other'][-1]:.1f} s); load {C.environment_note()}", flush=True)
    for label, series in (("CPU", times), ("wall", walls)):
        change = statistics.median((o - t) / t * 100 for t, o in zip(series["this"], series["other"]))
        print(f"{label}: median this {statistics.median(series['this']):.2f} s, other "
              f"{statistics.median(series['other']):.2f} s; other - this, median of the pairs: {change:+.1f} %")
    same = scores["this"] == scores["other"]
    print(f"every grade cell's score the same: {'yes' if same else 'NO'}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
