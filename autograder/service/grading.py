"""A batch of the queue graded through the package's public API (`api.grade_class`): the sandbox, the local pool
or a Dask cluster, exactly as `python -m autograder grade` grades a class. No student code runs here.

Each submission's notebooks are read from the exchange within bounds (exchange.read) and staged under the
service's own state as `s<row id>/`, so the run's ids are the queue's and never a name a student chose. A
submission whose folder cannot be read fails alone with why; one that crashes, hangs or attacks its sandbox
is that submission's status in the run's outcome, as in any class run: a hostile submission costs only itself.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import api
from ..api import GradedSubmission, RunError, RunOptions
from . import exchange, feedback
from .config import ServiceConfig
from .queue import Row


@dataclass
class Graded:
    """What grading one row gave: its result, or why it could not be graded; its nbgrader feedback files."""

    row: Row
    result: GradedSubmission | None = None
    problem: str = ""
    targets: list[str] | None = None


def jobs() -> int:
    """Submissions graded at once on this machine: the cores this process may run on."""
    return max(1, len(os.sched_getaffinity(0)))


def batch_size(config: ServiceConfig) -> int:
    """How many submissions (one per student) a batch takes: enough to keep every worker busy, few enough that
    a submission arriving meanwhile waits at most one batch."""
    return 64 if config.dask else max(4, 4 * jobs())


def grade(config: ServiceConfig, rows: list[Row], secret: str, tell: Callable[[str], None] | None = None) -> list[Graded]:
    """Grades `rows` (one class run) and returns each row's outcome. Raises `RunError` when the run itself cannot
    start or go on (no sandbox on this machine, a Dask cluster out of reach): then nothing is stored, and the
    rows are graded again on the next try."""
    work = config.state / "batches"
    work.mkdir(parents=True, exist_ok=True, mode=0o700)
    folder = Path(tempfile.mkdtemp(prefix="batch-", dir=work))
    try:
        done: list[Graded] = []
        paths = []
        for row in rows:
            notebooks = exchange.read(config.exchange, config.course, row.key)
            if isinstance(notebooks, str):
                done.append(Graded(row, problem=f"Not graded: {notebooks}."))
                continue
            staged = folder / "class" / f"s{row.id}"
            staged.mkdir(parents=True)
            for name, data in notebooks.files.items():
                (staged / name).write_bytes(data)
            done.append(Graded(row, targets=feedback.targets(config.course, config.assignment, row.student, notebooks,
                                                             staged)))
            paths.append(staged)
        if paths:
            options = RunOptions(out=folder / "out", paths=tuple(paths), secret=secret, jobs=jobs(), progress=False,
                                 similarity=None, dask=config.dask or None, tell=tell,
                                 release=config.release_folder())
            outcome = api.grade_class(options)
            results = {g.id: g for g in outcome.graded}
            for item in done:
                if item.targets is not None:
                    item.result = results.get(f"s{item.row.id}")
                    if item.result is None:
                        item.problem = "Not graded: the run gave no result for it."
        return done
    finally:
        shutil.rmtree(folder, ignore_errors=True)


__all__ = ["Graded", "RunError", "batch_size", "grade", "jobs"]
