"""Benchmark: what grading costs before a part's checks run, and after.

    .venv/bin/python tests/benchmarks/part_overhead.py [SUBMISSION] [--repeats 40] [--cuda]

Per round, for SUBMISSION (default: tests/corpus/base.py): each notebook loaded once in a sandbox
forked from the zygote (the cost paid once per submission); then, for each part, a process forked
from that loaded state, the other parts' names it is served sent, one name read back (the cheapest
check there is), the process ended (the cost paid per part). Prints the median and the fastest of
`--repeats` rounds, in milliseconds; the sandbox is the real one, with this machine's confinement.
`--cuda`: with CUDA initialised in this (the grading) process first, as a grading worker on a GPU is.
Not collected by pytest.
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
from autograder.engine.served import served_names  # noqa: E402
from autograder.engine.session import sandbox_backend  # noqa: E402
from autograder.model.submission import read_submission  # noqa: E402
from autograder.pool.worker import WorkerSettings, start_zygote  # noqa: E402
from autograder.isolation.limits import Limits  # noqa: E402
from autograder.isolation.proxy import Clock, Student, StudentError  # noqa: E402


def one_part(backend, shared, submission, part: str) -> float:
    """Seconds of one part's fixed cost: its process forked from the loaded submission, the names it is
    served sent, one name read back, the process ended."""
    start = time.perf_counter()
    channel, close = backend.open_channel(shared)
    student = Student(channel, Clock(Limits(call_seconds=10.0, budget_seconds=600.0)), close)
    try:
        student.load(submission.cells_for(part), served_names(part, backend.reference, lambda: student.deadline))
        names = assignment.part(part).names
        if names:
            try:
                student.get(names[0])
            except StudentError:
                pass  # a stub or an unanswered question reads back as an error: as cheap
    finally:
        student.close()
    return time.perf_counter() - start


def one_submission(backend, submission) -> tuple[float, dict[str, float]]:
    """(seconds to load the submission in a sandbox of its own, each part's fixed cost after that)."""
    shared = backend.new_submission()
    try:
        start = time.perf_counter()
        for notebook in assignment.NOTEBOOKS:  # the first part of each notebook loads it
            first = next(p.name for p in assignment.PARTS if p.notebook == notebook)
            one_part(backend, shared, submission, first)
        load = time.perf_counter() - start
        return load, {part: one_part(backend, shared, submission, part) for part in assignment.PART_NAMES}
    finally:
        shared.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("submission", nargs="?", type=Path, default=ROOT / "tests" / "corpus" / "base.py")
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--cuda", action="store_true", help="initialise CUDA in the grading process first")
    args = parser.parse_args()
    if args.cuda:
        import torch

        if not torch.cuda.is_available():
            parser.error("--cuda: no CUDA device here")
        torch.ones(1, device="cuda").sum().item()
    submission = read_submission(args.submission)
    zygote = start_zygote(WorkerSettings())
    try:
        zygote.wait_ready()
        backend = sandbox_backend(zygote)
        one_submission(backend, submission)  # the first forks warm the caches
        rounds = [one_submission(backend, submission) for _ in range(args.repeats)]
        loads = [load for load, _ in rounds]
        print(f"{args.repeats} rounds; per submission, once per notebook: a sandbox forked from the zygote, the code "
              f"loaded, a first part: median {statistics.median(loads) * 1000:6.1f} ms   fastest "
              f"{min(loads) * 1000:6.1f} ms")
        print("per part, after that: a process forked from the loaded code, the served names sent, one name read, "
              "the process ended")
        for part in assignment.PART_NAMES:
            times = [parts[part] for _, parts in rounds]
            print(f"  {part:<10} median {statistics.median(times) * 1000:6.1f} ms   fastest {min(times) * 1000:6.1f} ms")
    finally:
        backend.reference.close()
        zygote.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
