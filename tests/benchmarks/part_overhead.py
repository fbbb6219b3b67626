"""Benchmark: what grading one part costs before its checks run, and after.

    .venv/bin/python tests/benchmarks/part_overhead.py [SUBMISSION] [--repeats 40]

For each part: a sandbox forked from the run's zygote, the part's cells of SUBMISSION (default:
tests/corpus/base.py) loaded beside the other parts' reference code, one name read back (the
cheapest check there is), the sandbox closed. Prints the median and the fastest of `--repeats`
rounds, in milliseconds; the sandbox is the real one, with this machine's confinement. Not
collected by pytest.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from autograder import assignment  # noqa: E402
from autograder.core.session import injection, sandbox_backend  # noqa: E402
from autograder.core.submission import read_submission  # noqa: E402
from autograder.core.worker import WorkerSettings, start_zygote  # noqa: E402
from autograder.isolation.proxy import Clock, Student, StudentError  # noqa: E402


def one_round(backend, submission, part: str) -> float:
    start = time.perf_counter()
    channel, close = backend()
    student = Student(channel, Clock(10.0, 600.0), close)
    try:
        student.load(submission.cells_for(part), [(list(names), source) for names, source in injection(part)])
        names = assignment.part(part).names
        if names:
            try:
                student.get(names[0])
            except StudentError:
                pass  # a stub or an unanswered question reads back as an error: as cheap
    finally:
        student.close()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("submission", nargs="?", type=Path, default=ROOT / "tests" / "corpus" / "base.py")
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    submission = read_submission(args.submission)
    zygote = start_zygote(WorkerSettings())
    try:
        zygote.wait_ready()
        backend = sandbox_backend(zygote)
        print(f"per part, {args.repeats} rounds: fork a sandbox, load the part's cells, read one name, close")
        for part in assignment.PART_NAMES:
            one_round(backend, submission, part)  # the first fork of a part warms its caches
            rounds = [one_round(backend, submission, part) for _ in range(args.repeats)]
            print(f"  {part:<10} median {statistics.median(rounds) * 1000:6.1f} ms   fastest {min(rounds) * 1000:6.1f} ms")
    finally:
        zygote.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
