"""The tarpit: three looping submissions graded through the command line, and what they cost.

    .venv/bin/python tests/adversarial/tarpit.py --timeout 10      # the manual measurement

grades, on every part, base.py twice (the first absorbs the start-up, the second shows what an honest
submission costs) and three submissions that loop: at import, in causal_mask, and in causal_mask while
ignoring SIGTERM, SIGINT and SIGHUP. It prints each submission's seconds and scores, and whether the
loopers got their right scores (nothing; base.py's score apart from causal_mask). With the default
--jobs 2 the target at --timeout 10 is under 100 s in all (`bound`), where at the default timeout of
60 s the grader once took 367 s for the loop at import (one timeout per part), 316 s for the loop in a
function (one per call) and 312 s for the one ignoring SIGTERM. With --jobs 1 each submission's own
seconds show too (from when its results.json appeared): a looper may cost what base.py costs plus
about one timeout (`looper_bound`).

tests/test_tarpit.py runs the same with --timeout 3 and --jobs 1.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from autograder import assignment  # noqa: E402 - the parts and their names, from the one place that lists them

BASE = (ROOT / "tests" / "corpus" / "base.py").read_text()
ALL_PARTS = assignment.PART_NAMES
LOOP_IN_CAUSAL_MASK = """
def causal_mask(T_q, T_k=None, *, device=None):
    while True:
        pass
"""
SIGTERM_IGNORED = """
import signal as _signal
import time as _time

for _sig in (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP):
    _signal.signal(_sig, _signal.SIG_IGN)


def causal_mask(T_q, T_k=None, *, device=None):
    while True:
        try:
            _time.sleep(1000)
        except BaseException:  # noqa: BLE001
            pass
"""
# name: (source, the functions it scores nothing on; None for nothing at all)
SUBMISSIONS: dict[str, tuple[str, set[str] | None]] = {
    "base": (BASE, set()),
    "base_again": (BASE, set()),
    "loop_at_import": ("while True:\n    pass\n\n" + BASE, None),
    "loop_in_causal_mask": (BASE + "\n" + LOOP_IN_CAUSAL_MASK, {"causal_mask"}),
    "sigterm_ignored_loop": (BASE + "\n" + SIGTERM_IGNORED, {"causal_mask"}),
}
LOOPERS = ("loop_at_import", "loop_in_causal_mask", "sigterm_ignored_loop")


def slow_import_everything_loops(timeout: float) -> str:
    """Issue 19's submission: its import takes 95 % of the timeout, then every function of every part loops."""
    names = [name for p in assignment.PARTS for name in p.names]
    return (f"import time as _time\n_time.sleep({0.95 * timeout:.3f})\n\n" + BASE + "\n\n"
            "def _loop(*args, **kwargs):\n    while True:\n        pass\n\n\n"
            "class _LoopingModule(nn.Module):\n    def __init__(self, *args, **kwargs):\n        _loop()\n\n\n"
            + "".join(f"{name} = {'_LoopingModule' if name[0].isupper() else '_loop'}\n" for name in names))


def everything_loops_bound(timeout: float) -> float:
    """What that submission may cost on its own: its import once, one timeout, then the leash (one more
    timeout for all later calls together), and the grader's own few seconds."""
    return 0.95 * timeout + 2 * timeout + 8


def bound(timeout: float) -> float:
    """The most the whole class may take: 100 s at --timeout 10 (start-up and honest work, plus about one
    timeout per looper on two workers)."""
    return 30 + 7 * timeout


def looper_bound(honest_seconds: float, timeout: float) -> float:
    """The most one looper may take on its own: what base.py takes, one timeout, one reload and some slack."""
    return honest_seconds + 2 * timeout + 3


def write_class(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, (source, _) in SUBMISSIONS.items():
        paths.append(folder / f"{name}.py")
        paths[-1].write_text(source)
    return paths


def grade(paths: list[Path], out: Path, timeout: float, parts=ALL_PARTS, jobs: int = 2, python: str = sys.executable,
          cwd: Path = ROOT, env: dict[str, str] | None = None, extra: list[str] | None = None,
          wall: float = 1800, prefix: list[str] | None = None) -> dict:
    """Grade `paths` in this order (with `prefix` before the command: another host, tests/hosts.py); returns
    the wall seconds, the process and, by submission, the seconds from the start (or from the previous
    submission, with one job) until its results.json appeared."""
    command = [*(prefix or []), python, "-m", "autograder", "grade", *map(str, paths), "--out", str(out), "--jobs", str(jobs),
               "--parts", ",".join(parts), "--timeout", f"{timeout:g}", "--quiet", *(extra or [])]
    env = {**os.environ, "AUTOGRADER_SECRET": "tarpit", **(env or {})}
    start = time.time()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                               start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=wall)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
    seconds = time.time() - start
    done = {p.stem: (out / p.stem / "results.json").stat().st_mtime for p in paths if (out / p.stem / "results.json").exists()}
    each, previous = {}, start
    for sid in sorted(done, key=done.get):
        each[sid] = done[sid] - (previous if jobs == 1 else start)
        previous = done[sid]
    return {"seconds": seconds, "returncode": process.returncode, "stdout": stdout, "stderr": stderr,
            "each": each, "reports": read(out)}


def read(out: Path) -> dict[str, dict]:
    if not (out / "grades.csv").exists():
        return {}
    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    results = {sid: json.loads((out / sid / "results.json").read_text()) for sid in rows
               if (out / sid / "results.json").exists()}
    return {sid: {"row": row, "tests": results[sid]["tests"] if sid in results else [],
                  "seconds": results[sid]["extra_data"]["seconds"] if sid in results else None,  # its own, by the grader
                  # less what a busy machine's CPU added to its time limits (isolation.deadline)
                  "own_seconds": (results[sid]["extra_data"]["seconds"] - results[sid]["extra_data"]["busy_seconds"]
                                  if sid in results else None)}
            for sid, row in rows.items()}


def wrong_scores(reports: dict[str, dict]) -> dict[str, list[str]]:
    """Per submission, the checks whose score is not its right one (base.py's, or 0 where it loops)."""
    if "base" not in reports:
        return {"base": ["not graded"]}
    base = {t["name"]: t["score"] for t in reports["base"]["tests"]}
    wrong = {}
    for name, (_, zero_on) in SUBMISSIONS.items():
        if name not in reports:
            wrong[name] = ["not graded"]
            continue
        got = {t["name"]: t["score"] for t in reports[name]["tests"]}
        if set(got) != set(base):
            wrong[name] = ["not the same checks as base.py"]
            continue

        def right(check: str) -> float:
            subject = set(re.findall(r"\w+", check.split("/", 1)[1].split(":")[0]))
            return 0 if zero_on is None or subject & zero_on else base[check]  # noqa: B023 - called in this iteration

        bad = [f"{check}: {score:g}, expected {right(check):g}" for check, score in got.items() if score != right(check)]
        if bad or reports[name]["row"]["status"].startswith("grader error"):
            wrong[name] = bad + [reports[name]["row"]["status"]]
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--timeout", type=float, default=10)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--parts", default=",".join(ALL_PARTS))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tarpit-") as folder:
        paths = write_class(Path(folder) / "subs")
        result = grade(paths, Path(folder) / "out", args.timeout, tuple(args.parts.split(",")), args.jobs)
        (Path(folder) / "alone").mkdir()
        everything = Path(folder) / "alone" / "slow_import_everything_loops.py"
        everything.write_text(slow_import_everything_loops(args.timeout))
        alone = grade([everything], Path(folder) / "alone_out", args.timeout, tuple(args.parts.split(",")), 1)
    for sid, entry in sorted(result["reports"].items()):
        seconds = result["each"].get(sid)
        scores = " ".join(f"{part}={entry['row'].get(part, '')}" for part in args.parts.split(","))
        took = "" if seconds is None else f"{seconds:6.1f} s"
        print(f"{sid:22} {took:>8}  {scores}  {entry['row']['status'][:60]}")
    wrong = wrong_scores(result["reports"])
    print(f"\nexit status {result['returncode']}; {result['seconds']:.1f} s in all at --timeout {args.timeout:g} "
          f"--jobs {args.jobs} (target: under {bound(args.timeout):.0f} s); "
          + ("right scores" if not wrong else f"WRONG scores: {json.dumps(wrong, indent=1)[:3000]}"))
    if result["returncode"] != 0:
        print(result["stderr"][-3000:], file=sys.stderr)
    own = alone["reports"].get("slow_import_everything_loops", {})
    scored = sum(t["score"] for t in own.get("tests", []))
    print(f"slow import, every function looping, graded alone: {alone['seconds']:.1f} s from the command to its "
          f"results.json ({own.get('seconds')} s of it grading), {scored:g} points, exit status {alone['returncode']} "
          f"(target: under {everything_loops_bound(args.timeout) + 5:.0f} s)")
    fine = alone["returncode"] == 0 and scored == 0 and alone["seconds"] < everything_loops_bound(args.timeout) + 5
    return 0 if result["returncode"] == 0 and not wrong and result["seconds"] < bound(args.timeout) and fine else 1


if __name__ == "__main__":
    sys.exit(main())
