"""Grading a class's submissions: which need grading, a pool of grading workers, the results as they come
(autograder/classrun.py runs a class with them).

The submissions are read here (a submission is data; the workers never see a file), those graded
by an earlier run and unchanged since are taken from their reports, and the rest go to the
workers, each submission to whichever worker is free. A worker that dies is replaced; the
submission it was grading is tried once more, then reported as a grader error.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .. import assignment, releases
from ..isolation.cgroups import memory_limit
from ..isolation.limits import Limits
from ..isolation.protocol import SandboxBreach
from ..model.files import RESULTS_FILE, write_atomically
from .parent import WorkersParent
from ..model.results import GradedSubmission, Status
from ..engine.slots import CpuSlots
from ..model.submission import REFUSED, Submission, SubmissionError, read_submission
from ..model.tampering import Tampering
from .worker import WorkerError, WorkerFault, WorkerProcess, WorkerSettings, start_zygote

if TYPE_CHECKING:
    from ..isolation.sandbox import Zygote

MIN_SANDBOX_MEMORY_BYTES = 64 * 2**20  # beyond what torch maps: base.py passes every part with 32 MiB


@dataclass(frozen=True)
class Plan:
    """What a run finds: results it can keep, and submissions to grade."""

    kept: list[GradedSubmission]
    todo: list[Submission]
    cells: dict[str, dict] = dataclasses.field(default_factory=dict)  # every submission's cells by id, kept
    # ones too: the class report compares them (reports.similarity)


FINGERPRINT_FILE = "grading.json"  # beside results.json, for the grader alone (results.json goes to students)


def plan(paths: list[tuple[Path, str]], out: Path, parts: tuple[str, ...], force: bool, secret: str = "",
         release: releases.Release | None = None) -> Plan:
    """Read every submission against `release` (None: the grader's own); keep an earlier result only when it graded the same submission (its code,
    byte for byte), under the same secret, on the same parts, with the same graders, unless `force`."""
    kept, todo, cells = [], [], {}
    for path, sid in paths:
        try:
            submission = read_submission(path, sid, release)
        except SubmissionError:
            raise
        except Exception as exc:  # noqa: BLE001 - what one submission's files hold costs only that submission
            problem = f"the grader's reader failed on its files ({type(exc).__name__}), {REFUSED}"
            submission = Submission(sid, problems=[problem])
        cells[submission.id] = submission.cells
        earlier = None if force else earlier_result(out, submission, parts, fingerprint(submission, parts, secret, release))
        if earlier is not None:
            kept.append(earlier)
        else:
            todo.append(submission)
    return Plan(kept, todo, cells)


def fingerprint(submission: Submission, parts: tuple[str, ...], secret: str,
                release: releases.Release | None = None) -> str:
    """What a result was graded from, keyed with the secret (so the file holding it tells nothing of it)."""
    graded_from = {k: v for k, v in submission.to_json().items() if k != "newest_file"}  # its code, problems, notes
    message = json.dumps([graded_from, sorted(parts), grader_version(release)], sort_keys=True).encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def grader_version(release: releases.Release | None = None) -> str:
    """A digest of the graders, their hints, the reference and the release graded against (None: the
    grader's own): a change to any regrades all."""
    return _grader_version(releases.or_own(release).digest)


@lru_cache(maxsize=4)
def _grader_version(release_digest: str) -> str:
    digest = hashlib.sha256()
    for folder in (assignment.GRADERS_DIR, assignment.reference_folder()):
        for path in sorted(folder.glob("*")):
            if path.is_file() and path.suffix in (".py", ".ipynb"):
                digest.update(path.name.encode() + b"\0" + path.read_bytes())
    digest.update(b"hints\0" + (assignment.PACKAGE_DIR / "hints.py").read_bytes())  # what a failed check says
    digest.update(b"release\0" + release_digest.encode())
    return digest.hexdigest()


def write_record(out: Path, graded: GradedSubmission, fingerprint_value: str) -> None:
    """What the grader keeps for itself beside results.json: what it graded, what was tried (tampering), the
    quiz's options chosen (for the class's item analysis: results.json would show them to the student)."""
    write_atomically(out / graded.id / FINGERPRINT_FILE,
                     json.dumps({"fingerprint": fingerprint_value, "tampering": graded.tampering.to_json(),
                                 "answers": graded.answers()}))


def earlier_result(out: Path, submission: Submission, parts: tuple[str, ...], expected: str) -> GradedSubmission | None:
    report = out / submission.id / RESULTS_FILE
    try:
        graded = GradedSubmission.from_gradescope(json.loads(report.read_text(encoding="utf-8")))
        record = json.loads((out / submission.id / FINGERPRINT_FILE).read_text(encoding="utf-8"))
        recorded = record["fingerprint"]
        graded.tampering = Tampering.from_json(record.get("tampering"))
        graded.restore_answers(record.get("answers"))
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    if graded.status is Status.GRADER_ERROR or graded.id != submission.id or not hmac.compare_digest(recorded, expected):
        return None
    if not set(parts) <= set(graded.part_scores()):
        return None
    return graded


def fitted_limits(limits: Limits, workers: int, memory_limit: int | None) -> Limits:
    """`limits` fitted to `workers` grading workers on this machine, where a field was left at its default:
    each worker's sandbox gets an equal share of a GPU, and the graders' own CUDA values one more; in a
    container with a memory limit, half of it is shared by every sandbox that may be alive (a loaded one
    and a part's, per worker), so that no bomb starves another (the kernel kills a sandbox first, never
    the grader)."""
    default = Limits()
    if limits.gpu_memory_fraction == default.gpu_memory_fraction:
        limits = dataclasses.replace(limits, gpu_memory_fraction=1 / (workers + 1))
    if memory_limit is not None and limits.memory_bytes == default.memory_bytes:
        share = memory_limit // 2 // (2 * workers)
        limits = dataclasses.replace(limits, memory_bytes=max(MIN_SANDBOX_MEMORY_BYTES,
                                                              min(default.memory_bytes, share)))
    return limits


class LocalPool:
    """Grading worker processes on this machine, forked from one that collected the graders once (the
    workers' parent, which also forks the zygote) and sharing that zygote: `jobs` of them compute at
    once (CPU slots), more run, so that checks waiting on the clock overlap with others' computing."""

    WORKERS_PER_SLOT = 3

    def __init__(self, jobs: int):
        self.jobs = max(1, jobs)
        self.workers = self.WORKERS_PER_SLOT * self.jobs
        self.settings: WorkerSettings | None = None  # the run's, as `start` adapted them to this machine
        self.weaknesses: set[str] = set()
        self.isolation = ""  # what confines each sandbox here, once the zygote has said
        self.ready_at: float | None = None  # when the first submission went to a worker (time.monotonic)
        self._zygote: Zygote | None = None
        self._parent: WorkersParent | None = None
        self._warming: list[Future] = []  # workers started before the zygote was ready (`warm`)

    def begin(self) -> None:
        """Start the workers' parent: it imports torch and collects the graders while the caller reads the
        course and the submissions, which `start`'s settings need."""
        if self._parent is None:
            self._parent = WorkersParent()

    def start(self, settings: WorkerSettings) -> None:
        """Have the workers' parent fork the run's zygote (once it has imported torch), for `settings`."""
        if self._zygote is not None:
            raise RuntimeError("the pool was started already")
        self.begin()
        assert self._parent is not None  # begin() made it
        self.settings = dataclasses.replace(settings, cpu_slots=tuple(CpuSlots.create(self.jobs)),
                                            limits=fitted_limits(settings.limits, self.workers, memory_limit()))
        self._zygote = start_zygote(self.settings, forked_by=self._parent.fork_zygote)

    def _started_zygote(self) -> Zygote:
        if self._zygote is None:
            raise RuntimeError("the pool was not started (LocalPool.start)")
        return self._zygote

    def warm(self, submissions: int) -> None:
        """Start the workers that grading `submissions` will use now, while the zygote still imports and
        probes: each forks and collects the graders meanwhile. None is sent a submission before `ready`."""
        self._started_zygote()
        count = min(self.workers, submissions) - len(self._warming)
        starting = ThreadPoolExecutor(max(1, count), thread_name_prefix="worker-start")
        self._warming += [starting.submit(self._new_worker) for _ in range(count)]
        starting.shutdown(wait=False)

    def _new_worker(self) -> WorkerProcess:
        """A worker that said it can grade. Raises WorkerError (fatal: then none can) or, when the workers'
        parent is gone, OSError, RuntimeError or EOFError."""
        zygote = self._started_zygote()  # raises unless `start` gave the pool its settings
        assert self.settings is not None
        worker = WorkerProcess.local(self.settings, zygote, self._parent)
        try:
            self.weaknesses.update(worker.ready())
        except WorkerError as exc:
            worker.close()
            if exc.kind is WorkerFault.DIED:  # a worker that cannot start: none will
                exc.kind = WorkerFault.CANNOT_START
            raise
        return worker

    def _started_worker(self) -> WorkerProcess:
        """A warmed worker if one is left, else a new one (see `_new_worker`)."""
        try:
            starting = self._warming.pop()
        except IndexError:
            return self._new_worker()
        return starting.result()

    def ready(self) -> str:
        """What confines each sandbox here, once the probe found that they hold; raises WorkerError
        (grading refused) when it found a breach."""
        zygote = self._started_zygote()
        try:
            self.weaknesses.update(zygote.wait_ready())
        except SandboxBreach as exc:
            raise WorkerError(f"grading refused: {exc}", WorkerFault.REFUSED) from None
        except RuntimeError as exc:
            raise WorkerError(f"grading could not start: {exc}", WorkerFault.CANNOT_START) from None
        self.isolation = zygote.isolation
        return self.isolation

    def grade(self, submissions: list[Submission], parts: tuple[str, ...]) -> Iterator[GradedSubmission]:
        """Each submission's result, in the order they finish. Raises WorkerError (after stopping
        every worker) when grading must stop: the probe found a breach, graders that cannot run."""
        if not submissions:
            return
        self.ready()
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
                try:
                    for attempt in (1, 2):
                        if worker is None:
                            try:
                                worker = self._started_worker()
                            except WorkerError as exc:
                                done.put(exc)
                                return
                            except (OSError, RuntimeError, EOFError) as exc:  # the workers' parent is gone (killed)
                                done.put(GradedSubmission(submission.id, problems=list(submission.problems),
                                                          error=f"no grading worker could be started ({exc})"))
                                break
                        if self.ready_at is None:
                            self.ready_at = time.monotonic()
                        try:
                            done.put(GradedSubmission.from_json(worker.grade(submission.to_json(), parts)))
                            break
                        except WorkerError as exc:
                            if exc.fatal:  # it said why no worker can grade: the whole run stops
                                done.put(exc)
                                return
                            worker.close()
                            worker = None
                            if stop.is_set():  # the run is ending (Ctrl-C ended the workers too): no retry
                                return
                            if attempt == 2:
                                done.put(GradedSubmission(submission.id, problems=list(submission.problems),
                                                          error=f"the grading worker died twice while grading it ({exc})"))
                except Exception as exc:  # noqa: BLE001 - never a silent end: the run would wait for it forever
                    if worker is not None:
                        worker.close()
                        worker = None
                    done.put(GradedSubmission(submission.id, problems=list(submission.problems),
                                              error=f"grading it stopped ({type(exc).__name__}: {exc})"))
        finally:
            if worker is not None:
                worker.close()

    def close(self) -> None:
        while self._warming:  # started, never given a submission (fewer to grade, or grading refused)
            try:
                self._warming.pop().result().close()
            except Exception:  # noqa: BLE001 - one that could not start has nothing to close
                pass
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None
        if self._parent is not None:
            self._parent.close()
            self._parent = None
