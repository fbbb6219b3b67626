"""Rounds of the measured checks beside two busy loops: the same verdicts and the same hints every round?

    python tests/benchmarks/measured_rounds.py [--rounds 20] [--jobs 2]

Each round grades, from the command line, the tiles versions of tests/test_measured_checks.py (the corpus's
correct ones, the whole-grid controls and every way around the memory and work checks) with `--parts tiles`,
and every timing mistake of tests/corpus/buggy with `--parts timing`, while two busy loops compete for the CPU
all along. It prints, for each submission, the verdicts (tiles: the memory point and the work point; timing:
the hints its failed checks name) of the first round, and whether every later round gave the same; a run
with any difference exits 1. Slow (about 2 to 3 minutes a round on two busy cores): run by hand.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(TESTS))

from test_measured_checks import CONTROLS, CORPUS, VALID, WAYS_AROUND, _verdicts  # noqa: E402

SECRET = "measured-rounds"


def _write(folder: Path, patches: dict[str, str]) -> list[str]:
    folder.mkdir(parents=True)
    base = (CORPUS / "base.py").read_text()
    for name, patch in patches.items():
        (folder / f"{name}.py").write_text(base + "\n\n" + patch)
    return sorted(str(p) for p in folder.glob("*.py"))


def _grade(paths: list[str], out: Path, part: str, jobs: int) -> None:
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *paths, "--out", str(out), "--parts", part,
                          "--secret", SECRET, "--jobs", str(jobs), "--quiet"], capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"grading failed:\n{run.stderr[-3000:]}")


def _hints(results: Path) -> tuple[str, ...]:
    """The hints the failed checks of a results.json name (the text after 'Likely mistake:')."""
    found = set()
    for test in json.loads(results.read_text())["tests"]:
        if test["status"] != "passed":
            line = next((said for said in test["output"].splitlines() if said.startswith("Likely mistake:")), "(no hint)")
            found.add(line.removeprefix("Likely mistake: ").split(" — ")[0])
    return tuple(sorted(found))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="measured-rounds-"))
    tiles = _write(work / "tiles", {**VALID, **CONTROLS, **WAYS_AROUND})
    timing = _write(work / "timing", {p.stem: p.read_text() for p in sorted((CORPUS / "buggy").glob("timing_*.py"))})
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    rounds: list[dict[str, object]] = []
    try:
        for i in range(args.rounds):
            start = time.perf_counter()
            out = work / f"round{i}"
            _grade(tiles, out / "tiles", "tiles", args.jobs)
            _grade(timing, out / "timing", "timing", args.jobs)
            seen: dict[str, object] = {p.parent.name: _verdicts(p) for p in (out / "tiles").glob("*/results.json")}
            seen.update({p.parent.name: _hints(p) for p in (out / "timing").glob("*/results.json")})
            rounds.append(seen)
            same = seen == rounds[0]
            print(f"round {i + 1}: {time.perf_counter() - start:.0f} s, {'the same as round 1' if same else 'DIFFERENT'}",
                  flush=True)
    finally:
        for loop in busy:
            loop.kill()
    print(f"\n{'submission':42} {'verdicts of round 1':60} every round")
    differ = 0
    for name in sorted(rounds[0]):
        same = all(r.get(name) == rounds[0][name] for r in rounds)
        differ += not same
        first = rounds[0][name]
        shown = ", ".join(f"{k.split(': ')[1]}: {'pass' if v else 'fail'}" for k, v in first.items()) \
            if isinstance(first, dict) else "; ".join(first) or "(all passed)"
        print(f"{name:42} {shown[:60]:60} {'same' if same else 'DIFFERENT'}")
    print(f"\n{len(rounds)} rounds beside two busy loops: {differ} submission(s) with a verdict or hint that changed")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
