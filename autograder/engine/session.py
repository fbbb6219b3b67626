"""One pytest session grades many submissions: the graders are collected once.

`grade_all` runs pytest over every grader module with a loop of its own
(`pytest_runtestloop`, see `in_session`): for each job it runs the items of the
job's parts through pytest's own run protocol, with the plugin pointed at that
submission, and hands back a `GradedSubmission`. A process forked inside such a
session (a local grading worker, see `pool.parent`) grades with `grading_in`,
without collecting again. Fixtures are set up and torn down per
submission (the last item of a run tears everything down), so nothing carries
over from one student to the next.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

import pytest

from .. import assignment, releases
from ..isolation.limits import Limits
from ..isolation.literals import LiteralChannel, literal_values
from ..isolation.protocol import SandboxBreach
from ..isolation.proxy import LOADING, Channel, Clock, InProcessChannel, Student
from .plugin import Current, GradingPlugin, part_of
from ..model.results import GradedSubmission
from .served import Reference, served_names
from ..model import tampering
from .slots import CpuSlots
from ..model.submission import Submission, SubmissionError, setup_imports

if TYPE_CHECKING:
    from ..isolation.sandbox import ZygoteClient
    from .served import ReferenceProcess

CUDA_RESERVE_BYTES = 2**30  # of each GPU, kept by a grading worker for its own CUDA reference values
# pytest's plugins that graders never use, off: several of them hook every phase of every check (some hundred
# checks per submission)
UNUSED_PLUGINS = ("cacheprovider", "terminal", "warnings", "logging", "doctest", "junitxml", "pastebin", "stepwise",
                  "unittest", "faulthandler", "unraisableexception", "threadexception", "debugging", "legacypath",
                  "tmpdir", "monkeypatch", "recwarn", "setuponly", "setupplan", "subtests")
PYTEST_OPTIONS = ["-s", *(option for name in UNUSED_PLUGINS for option in ("-p", f"no:{name}")), "--noconftest"]


@dataclass(frozen=True)
class Job:
    """One submission to grade, on some parts, with the course secret."""

    submission: Submission
    secret: str
    parts: tuple[str, ...] = assignment.PART_NAMES


def configure_grading_process() -> None:
    """One thread (workers run side by side, and waking a thread pool on a busy machine costs more
    than the graders' small tensors), no TF32 in reference values, and on a GPU a reserve of memory
    that this worker's allocator keeps for its own CUDA reference values. What is loaded by now (torch,
    pytest, the graders) lives as long as the process: the garbage collector leaves it alone, so a
    collection does not walk it (seconds at the end of a run) nor copy the pages a forked worker shares."""
    import gc

    import torch

    from ..isolation.confinement import keep_memory_private

    keep_memory_private()
    gc.freeze()
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if torch.cuda.is_available():  # held in the caching allocator, so sandboxes cannot starve the CUDA reference
        for device in range(torch.cuda.device_count()):
            torch.empty(CUDA_RESERVE_BYTES, dtype=torch.uint8, device=f"cuda:{device}")


@dataclass(frozen=True)
class Backend:
    """Where a submission's code runs and what computes the names the grader serves it (`reference`).
    `new_submission()` gives what a submission's parts share (its code, loaded once; its `busy_seconds`),
    ended after its last part; `open_channel(shared)` a fresh channel for one part, and its closer."""

    new_submission: Callable[[], Any]
    open_channel: Callable[[Any], tuple[Channel, Callable[[], object]]]
    reference: "Reference"


def sandbox_backend(zygote: "ZygoteClient") -> Backend:
    """A submission loaded once in a sandbox of its own, each part in a process forked from it (see
    autograder.isolation); served calls computed by a reference process beside this worker."""
    from ..isolation.sandbox import Loads, SandboxChannel
    from .served import ReferenceProcess

    def open_channel(loads: Loads) -> tuple[Channel, Callable[[], object]]:
        channel = SandboxChannel(loads)
        return channel, channel.close

    reference = ReferenceProcess()
    serving = _Serving(reference)
    return Backend(lambda: Loads(zygote, serving), open_channel, reference)


class _Serving:
    """The grader's side of a submission's calls while they run (isolation.sandbox.Serving): this thread serves
    their callbacks, the reference process computes the names they call."""

    def __init__(self, reference: "ReferenceProcess"):
        self.reference = reference

    def cpu_seconds(self) -> float:
        return time.thread_time() + self.reference.cpu_seconds()

    def fresh_pids(self) -> list[int]:
        return self.reference.fresh_pids()


class _Nothing:
    busy_seconds = 0.0

    def close(self) -> None:
        pass


def in_process_backend() -> Backend:
    """The submission's code in this very process: for nbgrader grade cells, which already run in
    the student's kernel. No isolation."""
    from .served import InProcessReference

    return Backend(_Nothing, lambda shared: (InProcessChannel(), lambda: None), InProcessReference())


class _Collected:
    """The graders collected once, and `body` run inside pytest's run loop on them (each part's items)."""

    def __init__(self, body: Callable[[dict[str, list[pytest.Item]]], None]):
        self.body = body
        self.collection_errors: list[str] = []
        self.error: BaseException | None = None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A grader module that does not import is our fault: remember why."""
        if report.failed:
            self.collection_errors.append(f"{report.nodeid}: {report.longreprtext[-2000:]}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        """Run the body; the default loop (each item once) never runs."""
        if self.collection_errors:
            return True
        by_part: dict[str, list[pytest.Item]] = {}
        for item in session.items:
            by_part.setdefault(part_of(item), []).append(item)
        try:
            self.body(by_part)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller once pytest is done
            self.error = exc
        return True


def in_session(plugin: GradingPlugin, body: Callable[[dict[str, list[pytest.Item]]], None]) -> None:
    """Collect every grader module once, with `plugin`, and run `body(items by part)` in that pytest
    session (which grades with `Grader`). Raises what the body raised, and RuntimeError when the graders
    cannot run."""
    collected = _Collected(body)
    modules = [str(assignment.GRADERS_DIR / p.grader_module) for p in assignment.PARTS]
    args = [*modules, *PYTEST_OPTIONS, "--rootdir", str(assignment.GRADERS_DIR),
            "-c", str(assignment.GRADERS_DIR / "pytest.ini")]
    saved = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only our plugin, whatever else is installed
    try:
        status = pytest.main(args, plugins=[plugin, collected])
    finally:
        if saved is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved
    if collected.error is not None:
        raise collected.error
    if collected.collection_errors or status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        raise RuntimeError(f"the graders could not run (pytest exit {status}):\n" + "\n".join(collected.collection_errors))


class Grader:
    """Grades jobs through a session's collected items (`in_session`), one after another."""

    def __init__(self, backend: Backend, limits: Limits, plugin: GradingPlugin, slots: CpuSlots | None = None,
                 release: releases.Release | None = None):
        self.backend, self.limits, self.plugin, self.slots, self.release = backend, limits, plugin, slots, release
        self.preloaded = _preloaded(release)

    def grade_each(self, jobs: Iterable[Job], by_part: dict[str, list[pytest.Item]],
                   on_graded: Callable[[GradedSubmission], None]) -> None:
        for job in jobs:
            items = [i for p in job.parts for i in by_part.get(p, [])]
            try:
                graded = self._grade(job, items)
            except SandboxBreach:
                raise
            except Exception as exc:  # noqa: BLE001 - one submission's failure is its own status, never the run's
                if items:
                    items[0].session._setupstate.teardown_exact(None)
                graded = GradedSubmission(job.submission.id, [], list(job.submission.problems),
                                          error=f"the grader failed on this submission ({type(exc).__name__})",
                                          notes=list(job.submission.notes))
            on_graded(graded)

    def _grade(self, job: Job, items: list[pytest.Item]) -> GradedSubmission:
        if self.slots is not None:
            self.slots.acquire()
        start = time.monotonic()
        clock = Clock(self.limits)
        submission = job.submission

        shared = self.backend.new_submission()
        students: list[Student] = []

        literals: dict[str, dict | None] = {}  # per notebook: its parts read the same cells

        def open_student(part_name: str) -> Student:
            cells = submission.cells_for(part_name)
            notebook = assignment.part(part_name).notebook
            if notebook not in literals:
                literals[notebook] = literal_values(cells, self.preloaded)
            values = literals[notebook]
            if values is None:
                channel, close = self.backend.open_channel(shared)
            else:  # the quiz's answers: read, not run (a sandbox only for what they cannot answer)
                channel = LiteralChannel(values, lambda: self.backend.open_channel(shared))
                close = channel.close
            student = Student(channel, clock, close)
            if not cells:  # its notebook was not found, or not read: the submission's notes say why, once
                student.unread = f"your {notebook}.ipynb was not read (the note at the top says why)"
            students.append(student)
            student.load(cells, served_names(part_name, self.backend.reference, lambda: student.deadline))
            return student

        current = Current(open_student, f"{job.secret}\0{submission.id}", slots=self.slots,
                          reference=self.backend.reference, secret=job.secret, quiz_shown=submission.quiz_shown,
                          release=self.release)
        self.plugin.current = current
        part_seconds: dict[str, float] = {}
        try:
            for index, item in enumerate(items):
                began = time.monotonic()
                nextitem = items[index + 1] if index + 1 < len(items) else None
                item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)  # tears down a part after its last
                part = part_of(item)
                part_seconds[part] = part_seconds.get(part, 0.0) + time.monotonic() - began
                if current.fatal is not None:
                    item.session._setupstate.teardown_exact(None)
                    raise current.fatal
        finally:
            shared.close()
            self.plugin.current = None
            if self.slots is not None:
                self.slots.release()
        graded = GradedSubmission(submission.id, list(current.results.values()), list(submission.problems),
                                  seconds=time.monotonic() - start,
                                  part_seconds={p: round(s, 4) for p, s in part_seconds.items()},
                                  notes=list(submission.notes), tampering=_tampering(submission, students),
                                  busy_seconds=round(shared.busy_seconds, 3), stopped_seconds=round(clock.stopped, 3),
                                  cpu_seconds=round(sum(s.work_seconds for s in students), 3))
        if not graded.checks:
            graded.error = f"no checks ran for the parts {', '.join(job.parts)}"
        return graded


def _preloaded(release: releases.Release | None = None) -> set[str]:
    """What every sandbox has imported before any submission's code (the release's setup cells' imports);
    where the release cannot be read, nothing, so literal cells that import are loaded as any code is."""
    try:
        return set(setup_imports(release))
    except (OSError, SubmissionError):
        return set()


def _tampering(submission: Submission, students: list[Student]) -> tampering.Tampering:
    """What its code tries, and what its processes sent that no honest one sends (a forged reply to its
    loading is one message, however many parts were given it)."""
    found = tampering.scan(submission.cells)
    forged = [f for s in students for f in s.forged if not f.startswith(LOADING)]
    forged += sorted({f for s in students for f in s.forged if f.startswith(LOADING)})
    for what in forged:
        found.add(tampering.FORGED, what)
    return found


def grade_all(jobs: Iterable[Job], backend: Backend, limits: Limits,
              on_graded: Callable[[GradedSubmission], None], slots: CpuSlots | None = None,
              release: releases.Release | None = None) -> None:
    """Grade `jobs` (any iterable, read as they come) in one pytest session against `release` (None: the
    grader's own copy), calling `on_graded` with each result; with `slots`, a submission is graded holding a
    CPU slot. Raises SandboxBreach when a sandbox could reach what it must not, and RuntimeError when the
    graders cannot run."""
    plugin = GradingPlugin()
    grader = Grader(backend, limits, plugin, slots, release)
    try:
        in_session(plugin, lambda by_part: grader.grade_each(jobs, by_part, on_graded))
    finally:
        backend.reference.close()


def grading_in(plugin: GradingPlugin, by_part: dict[str, list[pytest.Item]]) -> Callable[..., None]:
    """`grade_all` for a process forked inside a session that has already collected the graders
    (`in_session`, with `plugin`): the jobs go through those items."""

    def grade(jobs: Iterable[Job], backend: Backend, limits: Limits,
              on_graded: Callable[[GradedSubmission], None], slots: CpuSlots | None = None,
              release: releases.Release | None = None) -> None:
        try:
            Grader(backend, limits, plugin, slots, release).grade_each(jobs, by_part, on_graded)
        finally:
            backend.reference.close()

    return grade


def grade_one(job: Job, backend: Backend, limits: Limits, release: releases.Release | None = None) -> GradedSubmission:
    """One submission, in a session of its own, against `release` (None: the grader's own copy)."""
    found: list[GradedSubmission] = []
    grade_all([job], backend, limits, found.append, release=release)
    return found[0]

