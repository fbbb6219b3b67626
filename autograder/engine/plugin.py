"""The pytest plugin that turns grader modules into scored checks of the submission being graded.

Each grader module names its part (`PART = "masks"`). For the submission the
session is grading (`Current`), the plugin gives a module's tests a `student`
for that part, a `gen` seeded per student and per check, and a `device` over
every device present; it collects one result per check, which passes only if
it passed on every device. A watchdog stops a check whose own computing runs
away; an exception raised while handling what the student's code returned is
that check's failure, and only a fault before any reply is the grader's.
"""

from __future__ import annotations

import hashlib
import signal
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import pytest
import torch

from ..isolation import wire
from .. import releases
from ..quiz import OPTIONS
from ..isolation.protocol import SandboxBreach
from ..isolation.proxy import Student, StudentError
from .checks import Failure
from ..model.results import CheckResult
from .slots import CpuSlots
from ..versions import patches_apply

WATCHDOG_CPU_SECONDS = 30  # the grader's own computing in one check (the student's time is limited apart)
MAX_FIGURES = 3  # pictures kept per check


def available_devices() -> list[str]:
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


@dataclass
class Current:
    """The submission being graded, as the plugin sees it."""

    open_student: Callable[[str], Student]  # part -> a Student with the submission's code loaded
    seed_material: str  # the secret and the submission's id
    results: dict[tuple[str, str], CheckResult] = field(default_factory=dict)
    student: Student | None = None  # of the part being graded
    fatal: BaseException | None = None  # the grader's own probe found a breach: grading must stop
    slots: CpuSlots | None = None  # held while computing, let go while a `waits` check waits
    reference: Any = None  # what computes served calls (engine.served.Reference)
    secret: str = ""  # the course secret (a shuffled quiz's option order is keyed with it)
    quiz_shown: dict | None = None  # what the submission's quiz.ipynb shows (quiz.shown_quiz); None: none
    release: releases.Release | None = None  # the release graded against (None: the grader's own copy)


class _Watchdog(Exception):
    """The check's own computing ran past WATCHDOG_CPU_SECONDS."""


PLUGIN = pytest.StashKey["GradingPlugin"]()
NOTES = pytest.StashKey[list[str]]()  # an item's `note` lines
ANSWER = pytest.StashKey[tuple[str, str]]()  # a multiple-choice check's (option chosen, right option): `answered`


class GradingPlugin:
    """Result collection and the fixtures' state; `current` is set by the session for each submission."""

    def __init__(self) -> None:
        self.current: Current | None = None
        self._replies_before = 0

    def pytest_configure(self, config: pytest.Config) -> None:
        """Register the marker that makes a test a graded check, and the fixtures."""
        config.addinivalue_line("markers", "check(name, points): one graded check")
        config.addinivalue_line("markers", "waits: the check mostly waits on the clock; another worker may compute")
        config.stash[PLUGIN] = self
        config.pluginmanager.register(_Fixtures(), "autograder-fixtures")

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """A failed check's feedback is our own message (see _feedback); pytest's report of it is never
        read, and even its shortest form walks and filters the whole traceback: each test reports its
        exception's first line instead. `repr_failure` is pytest's to override; `_repr_failure_py`, private,
        only with the version of pytest this was written for (`versions.WRITTEN_FOR`)."""
        private = patches_apply("pytest")
        # (the ignores: pytest types these methods as fixed; replacing an item's own is how this is done)
        for item in items:
            item.repr_failure = _exception_line  # type: ignore[method-assign]
            if private:
                item._repr_failure_py = _exception_line  # type: ignore[method-assign, assignment]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Run every test that takes `device` on each device present."""
        if "device" in metafunc.fixturenames:
            metafunc.parametrize("device", available_devices())

    def generator(self, check_id: str) -> torch.Generator:
        """Inputs differ per student and per check, so answers cannot be hard-coded or shared."""
        assert self.current is not None
        digest = hashlib.sha256(f"{self.current.seed_material}\0{check_id}".encode()).digest()
        return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little"))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        """Let go of the CPU slot while a check that waits on the clock runs."""
        slots = self.current.slots if self.current is not None else None
        waiting = slots is not None and item.get_closest_marker("waits") is not None
        if waiting and slots is not None:
            slots.release()
        try:
            yield
        finally:
            if waiting and slots is not None:
                slots.acquire()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Any:
        """Count the student's replies around the fixtures too (a study run once for several checks), and
        start the check's notes and answer afresh: its item serves every submission this worker grades."""
        self._replies_before = self._replies()
        item.stash[NOTES] = []
        item.stash[ANSWER] = ("", "")
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Any:
        """Count the student's replies and start the watchdog around each check."""
        self._replies_before = self._replies()
        previous = signal.signal(signal.SIGVTALRM, _stop_check)
        signal.setitimer(signal.ITIMER_VIRTUAL, WATCHDOG_CPU_SECONDS)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, previous)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        """Fold each test's outcome into its check's result."""
        outcome = yield
        report = outcome.get_result()
        marker = item.get_closest_marker("check")
        if self.current is None or marker is None or (report.when != "call" and not report.failed):
            return
        part = part_of(item)
        params = dict(item.callspec.params) if hasattr(item, "callspec") else {}
        name = marker.kwargs["name"].format(**params)  # "{question}: ..." names one check per parameter
        result = self.current.results.setdefault((part, name), CheckResult(part, name, float(marker.kwargs["points"])))
        if report.when == "call":
            noted = item.stash.get(NOTES, [])
            result.outputs += noted
            result.chosen, result.right = item.stash.get(ANSWER, ("", ""))
        if not report.failed:
            return
        if call.excinfo is not None and isinstance(call.excinfo.value, SandboxBreach):
            self.current.fatal = call.excinfo.value
        result.passed = False
        replied = report.when in ("setup", "call") and self._replies() > self._replies_before
        message, internal = _feedback(call.excinfo, replied)
        result.internal_error |= internal
        exc = call.excinfo.value if call.excinfo is not None else None
        if isinstance(exc, Failure):
            result.figures += exc.figures[:MAX_FIGURES - len(result.figures)]
            result.hint = result.hint or exc.hint
        elif isinstance(exc, StudentError):
            result.trouble, result.detail = (result.trouble, result.detail) if result.trouble else (exc.kind, exc.detail)
        device = params.get("device")
        result.outputs.append(f"[on {device}] {message}" if device and device != "cpu" else message)

    def _replies(self) -> int:
        student = self.current.student if self.current is not None else None
        return student.replies if student is not None else 0


def part_of(item: pytest.Item) -> str:
    """The part whose grader module `item` was collected from: every item is one of its test functions."""
    assert isinstance(item, pytest.Function)
    return item.module.PART


def _exception_line(excinfo: pytest.ExceptionInfo, style: str | None = None) -> str:
    return excinfo.exconly().partition("\n")[0]


class _Fixtures:
    """The fixtures grader modules use, for the submission being graded."""

    @pytest.fixture(scope="module")
    @staticmethod
    def student(request: pytest.FixtureRequest) -> Iterator[Student]:
        """The submission, loaded in a sandbox of its own for this module's part."""
        current = request.config.stash[PLUGIN].current
        assert current is not None
        student = current.open_student(request.module.PART)
        current.student = student
        yield student
        current.student = None
        student.close()  # a hostile part's leftover processes must not run on beside the next part

    @pytest.fixture(scope="module")
    @staticmethod
    def module_gen(request: pytest.FixtureRequest) -> torch.Generator:
        """For work shared by several checks of one module (a study run once)."""
        return request.config.stash[PLUGIN].generator(request.node.nodeid)

    @pytest.fixture
    @staticmethod
    def served(request: pytest.FixtureRequest, student: Student) -> Callable[[str], wire.Handle]:
        """`served(name)`: a function of `engine.served.WORKLOADS` to hand to the submission's code; its
        calls are computed by the grader, and the submission sees only a neutral handle."""
        from .served import workload

        current = request.config.stash[PLUGIN].current
        assert current is not None  # as `student` found it
        return lambda name: student.remote(workload(name, current.reference, lambda: student.deadline), values=True)

    @pytest.fixture
    @staticmethod
    def note(request: pytest.FixtureRequest) -> Callable[[str], None]:
        """`note(text)`: a line of the check's feedback whether it passes or fails (why a right answer is right)."""
        notes = request.node.stash.setdefault(NOTES, [])
        return lambda text: notes.append(str(text))

    @pytest.fixture
    @staticmethod
    def answered(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
        """`answered(chosen, right)`: a multiple-choice check's option chosen ("" for none) and its right option,
        as the key letters them; data for the class's item analysis, checked to be letters of the options."""
        def record(chosen: str, right: str) -> None:
            if chosen not in ("", *OPTIONS) or right not in OPTIONS:
                raise ValueError(f"answered({chosen!r}, {right!r}): each must be one of {', '.join(OPTIONS)}")
            request.node.stash[ANSWER] = (chosen, right)
        return record

    @pytest.fixture
    @staticmethod
    def gen(request: pytest.FixtureRequest) -> torch.Generator:
        """A generator seeded per student and per check."""
        return request.config.stash[PLUGIN].generator(request.node.nodeid)


def _stop_check(signum: int, frame: Any) -> None:
    raise _Watchdog(f"the check was stopped after {WATCHDOG_CPU_SECONDS} s of the grader's own computing")


def _feedback(excinfo: pytest.ExceptionInfo | None, replied: bool) -> tuple[str, bool]:
    """The student's feedback for a failed check, and whether the grader itself broke.

    Once the student's code has replied, whatever goes wrong is about what it returned."""
    if excinfo is None:
        return "The check did not run.", True
    exc = excinfo.value
    if isinstance(exc, Failure):
        return str(exc), False
    if isinstance(exc, StudentError):
        return exc.explain(), False
    described = f"{type(exc).__name__}: {str(exc)[:300]}"
    if replied:
        return (f"What your code returned could not be checked ({described}). Compare its types and shapes with "
                "what the assignment asks for."), False
    return f"Internal grader error ({described}); this is not your fault, tell your instructor.", True
