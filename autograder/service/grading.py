"""A batch of the queue graded through the package's public API (`api.grade_class`): the sandbox, the local pool
or a Dask cluster, exactly as `python -m autograder grade` grades a class. No student code runs here.

Each submission's notebooks are read from the exchange within bounds (exchange.read) and staged under the
service's own state as `s<row id>/`, so the run's ids are the queue's and never a name a student chose. A
submission whose folder cannot be read fails alone with why; one that crashes, hangs or attacks its sandbox
is that submission's status in the run's outcome, as in any class run: a hostile submission costs only itself.

The service grades each batch in a process of its own (`child`, started by runner.py from a forkserver, never
a fork of the service, which has threads): the class run's pool sets signal handlers, which only a main thread
may, and the service's loop keeps admitting while a batch runs. The child answers once through a pipe: each
row's outcome as plain data (`answer`, read back with `answered`), or the RunError that stopped the run.
It leads a process group of its own, with the workers it starts: the service stops it with SIGINT to that group,
which is what Ctrl-C does to `grade` (the run stops its workers and keeps nothing half done); SIGTERM to it
alone does the same. It then answers nothing.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Any, Callable

from .. import api
from ..api import GradedSubmission, RunError, RunInterrupted, RunOptions
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


def batch_jobs(config: ServiceConfig) -> int:
    """Workers of each batch: the cores shared among the batches graded at once, so that a batch held by a
    hostile submission keeps only its own share of the machine."""
    return max(1, jobs() // config.concurrent_batches)


def batch_size(config: ServiceConfig, students: int = 0, free: int = 1) -> int:
    """How many submissions (one per student) the next batch takes, with `students` waiting to be graded (none
    of them in a batch being graded) and `free` batches that may start now: one per worker of the batch when
    few wait, so that a lone submission is graded at once and one that runs to its time budget holds back no
    batch-mate (their results come back with the batch); when many wait, their share of the free batches, up
    to four per worker, so that a burst does not pay a batch's start for each submission. On a Dask cluster,
    enough to keep it busy."""
    if config.dask:
        return 64
    workers = batch_jobs(config)
    share = -(-students // max(1, free))
    return max(workers, min(4 * workers, share))


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
            options = RunOptions(out=folder / "out", paths=tuple(paths), secret=secret, jobs=batch_jobs(config),
                                 progress=False,
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


Answer = tuple[Any, ...]  # ("graded", [(row id, result json | None, problem, targets | None)...]) | ("error", text, status)


def answer(done: list[Graded]) -> Answer:
    return ("graded", [(g.row.id, g.result.to_json() if g.result is not None else None, g.problem, g.targets)
                       for g in done])


def answered(items: list[tuple[int, Any, str, list[str] | None]]) -> list[tuple[int, GradedSubmission | None, str,
                                                                             list[str] | None]]:
    """`answer`'s items as the parent stores them: (row id, result, problem, targets)."""
    return [(row_id, GradedSubmission.from_json(result) if result is not None else None, problem,
             list(targets) if targets is not None else None) for row_id, result, problem, targets in items]


def _interrupted(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # the class run stops its workers and raises RunInterrupted


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def child(config: ServiceConfig, rows: list[Row], secret: str, pipe: Connection) -> None:
    """A batch's own process: grades `rows` and answers through `pipe`, once; nothing when interrupted."""
    os.setpgrp()
    signal.signal(signal.SIGTERM, _interrupted)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    reply: Answer | None = None
    try:
        try:
            reply = answer(grade(config, rows, secret, tell=_say))
        except (RunInterrupted, KeyboardInterrupt):
            reply = None
        except RunError as exc:
            reply = ("error", str(exc), exc.status)
        except OSError as exc:  # its own state folder full or unwritable
            reply = ("error", str(exc), 1)
        if reply is not None:
            pipe.send(reply)
        pipe.close()
    except KeyboardInterrupt:  # a stop while answering: the rows are graded again at the next start
        pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # no teardown of all that grading loaded


__all__ = ["Answer", "Graded", "RunError", "answer", "answered", "batch_jobs", "batch_size", "child", "grade", "jobs"]
