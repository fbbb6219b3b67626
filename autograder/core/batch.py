"""Grading a class: which submissions need grading, a pool of grading workers, the results as they come.

The submissions are read here (a submission is data; the workers never see a file), those graded
by an earlier run and unchanged since are taken from their reports, and the rest go to the
workers, each submission to whichever worker is free. A worker that dies is replaced; the
submission it was grading is tried once more, then reported as a grader error.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from .results import GradedSubmission, Status
from .slots import CpuSlots
from .submission import Submission, read_submission
from ..isolation.protocol import SandboxBreach
from .worker import WorkerError, WorkerProcess, WorkerSettings, forkserver, start_zygote

RESULTS_FILE = "results.json"


@dataclass(frozen=True)
class Plan:
    """What a run finds: results it can keep, and submissions to grade."""

    kept: list[GradedSubmission]
    todo: list[Submission]


def plan(paths: list[tuple[Path, str]], out: Path, parts: tuple[str, ...], force: bool) -> Plan:
    """Read every submission; keep an earlier result that graded the same parts and is newer than
    every file of its submission (a resubmission is graded again), unless `force`."""
    kept, todo = [], []
    for path, sid in paths:
        submission = read_submission(path, sid)
        earlier = None if force else earlier_result(out, submission, parts)
        if earlier is not None:
            kept.append(earlier)
        else:
            todo.append(submission)
    return Plan(kept, todo)


def earlier_result(out: Path, submission: Submission, parts: tuple[str, ...]) -> GradedSubmission | None:
    report = out / submission.id / RESULTS_FILE
    try:
        graded = GradedSubmission.from_gradescope(json.loads(report.read_text(encoding="utf-8")))
        written = report.stat().st_mtime
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    if graded.status is Status.GRADER_ERROR or written < submission.newest_file or graded.id != submission.id:
        return None
    if not set(parts) <= set(graded.part_scores()):
        return None
    return graded


class LocalPool:
    """Grading worker processes on this machine, forked from one that imported the graders once and
    sharing one zygote: `jobs` of them compute at once (CPU slots), more run, so that checks waiting
    on the clock overlap with others' computing."""

    WORKERS_PER_SLOT = 3

    def __init__(self, settings: WorkerSettings, jobs: int):
        jobs = max(1, jobs)
        self.settings = dataclasses.replace(settings, cpu_slots=tuple(CpuSlots.create(jobs)))
        self.workers = self.WORKERS_PER_SLOT * jobs
        self.weaknesses: set[str] = set()
        self.startup_seconds: float | None = None  # until the first worker was ready
        self._zygote = None
        self._context = None
        self._started = time.monotonic()

    def start(self) -> None:
        """Start the zygote and the workers' parent: both import what they need while the caller goes
        on (reading the course, the submissions)."""
        if self._zygote is None:
            self._started = time.monotonic()
            self._zygote = start_zygote(self.settings)
            self._context = forkserver()

    def grade(self, submissions: list[Submission], parts: tuple[str, ...]) -> Iterator[GradedSubmission]:
        """Each submission's result, in the order they finish. Raises WorkerError (after stopping
        every worker) when grading must stop: a sandbox breach, graders that cannot run."""
        if not submissions:
            return
        self.start()
        try:
            self.weaknesses.update(self._zygote.wait_ready())
        except SandboxBreach as exc:
            raise WorkerError(f"grading refused: {exc}", fatal=True) from None
        todo: queue.Queue[Submission] = queue.Queue()
        for submission in submissions:
            todo.put(submission)
        done: queue.Queue[GradedSubmission | WorkerError] = queue.Queue()
        stop = threading.Event()
        threads = [threading.Thread(target=self._serve, args=(todo, done, parts, stop), daemon=True)
                   for _ in range(min(self.workers, len(submissions)))]
        for thread in threads:
            thread.start()
        try:
            for _ in range(len(submissions)):
                result = done.get()
                if isinstance(result, WorkerError):
                    raise result
                yield result
        finally:
            stop.set()
            for thread in threads:
                thread.join()

    def _serve(self, todo: queue.Queue, done: queue.Queue, parts: tuple[str, ...], stop: threading.Event) -> None:
        worker: WorkerProcess | None = None
        try:
            while not stop.is_set():
                try:
                    submission = todo.get_nowait()
                except queue.Empty:
                    return
                for attempt in (1, 2):
                    if worker is None:
                        worker = WorkerProcess.local(self.settings, self._zygote, self._context)
                        try:
                            self.weaknesses.update(worker.ready())
                            if self.startup_seconds is None:
                                self.startup_seconds = time.monotonic() - self._started
                        except WorkerError as exc:
                            exc.fatal = True  # a worker that cannot start: none will
                            done.put(exc)
                            return
                    try:
                        done.put(GradedSubmission.from_json(worker.grade(submission.to_json(), parts)))
                        break
                    except WorkerError as exc:
                        if exc.fatal:  # it said why no worker can grade: the whole run stops
                            done.put(exc)
                            return
                        worker.close()
                        worker = None
                        if attempt == 2:
                            done.put(GradedSubmission(submission.id, problems=list(submission.problems),
                                                      error=f"the grading worker died twice while grading it ({exc})"))
        finally:
            if worker is not None:
                worker.close()

    def close(self) -> None:
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None



@dataclass(frozen=True)
class ClassRun:
    """One grading run: which submissions, where the reports go, and how to grade."""

    paths: list[tuple[Path, str]]  # (path, submission id)
    out: Path
    parts: tuple[str, ...]
    settings: WorkerSettings
    workers: int = 1
    force: bool = False


def grade_class(run: ClassRun, pool: LocalPool | None = None, progress: bool = True,
                on_result: Callable[[GradedSubmission], None] = lambda graded: None) -> list[GradedSubmission]:
    """Grade what needs grading and write each submission's reports as it comes back (then
    `on_result`, kept results first), then the class's grades.csv and class_report.html; returns
    every submission's result, kept ones included."""
    from tqdm import tqdm

    from .. import reports

    found = plan(run.paths, run.out, run.parts, run.force)
    graded = list(found.kept)
    for kept in found.kept:
        on_result(kept)
    run.out.mkdir(parents=True, exist_ok=True)
    pool = pool or LocalPool(run.settings, run.workers)
    try:
        with tqdm(total=len(found.todo), unit="submission", disable=not progress or not found.todo) as bar:
            for result in pool.grade(found.todo, run.parts):
                reports.write_submission(result, run.out)
                graded.append(result)
                on_result(result)
                bar.update()
    finally:
        pool.close()
    reports.write_class(graded, run.out, kept=frozenset(g.id for g in found.kept))
    return graded
