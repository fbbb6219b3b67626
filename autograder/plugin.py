"""The pytest plugin that turns grader modules into scored checks for one submission.

Each grader module names its part (`PART = "masks"`). The plugin gives its tests
a `student` for that part, a `gen` seeded per student and per check, and a
`device` over every device present; it collects one result per check, which
passes only if it passed on every device.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import pytest
import torch

from .checks import Failure
from .student import Student, StudentError


@dataclass
class CheckResult:
    """One graded check, in the shape of a Gradescope test entry."""

    part: str
    name: str
    max_score: float
    passed: bool = True
    outputs: list[str] = field(default_factory=list)
    internal_error: bool = False

    def as_gradescope(self) -> dict[str, Any]:
        return {
            "name": f"{self.part}/{self.name}",
            "score": self.max_score if self.passed else 0.0,
            "max_score": self.max_score,
            "status": "passed" if self.passed else "failed",
            "output": "\n\n".join(self.outputs) if self.outputs else "Passed.",
            "visibility": "visible",
        }


def available_devices() -> list[str]:
    return ["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]


class GradingPlugin:
    """Fixtures and result collection for grading one submission."""

    def __init__(self, open_student: Callable[[str], Student], seed_material: str):
        self.open_student = open_student
        self.seed_material = seed_material
        self.results: dict[tuple[str, str], CheckResult] = {}

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "check(name, points): one graded check")

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "device" in metafunc.fixturenames:
            metafunc.parametrize("device", available_devices())

    @pytest.fixture(scope="module")
    def student(self, request: pytest.FixtureRequest) -> Iterator[Student]:
        student = self.open_student(request.module.PART)
        yield student
        student.close()  # a hostile part's leftover processes must not run on beside the next part

    @pytest.fixture(scope="module")
    def module_gen(self, request: pytest.FixtureRequest) -> torch.Generator:
        """For work shared by several checks of one module (a slow study run once)."""
        return self._generator(request.node.nodeid)

    @pytest.fixture
    def gen(self, request: pytest.FixtureRequest) -> torch.Generator:
        """Inputs differ per student and per check, so answers cannot be hard-coded or shared."""
        return self._generator(request.node.nodeid)

    def _generator(self, check_id: str) -> torch.Generator:
        digest = hashlib.sha256(f"{self.seed_material}\0{check_id}".encode()).digest()
        return torch.Generator().manual_seed(int.from_bytes(digest[:8], "little"))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        outcome = yield
        report = outcome.get_result()
        marker = item.get_closest_marker("check")
        if marker is None or (report.when != "call" and not report.failed):
            return
        part = item.module.PART
        params = dict(item.callspec.params) if hasattr(item, "callspec") else {}
        name = marker.kwargs["name"].format(**params)  # "{question}: ..." names one check per parameter
        result = self.results.setdefault((part, name), CheckResult(part, name, float(marker.kwargs["points"])))
        if report.failed:
            result.passed = False
            message, internal = _feedback(call.excinfo)
            result.internal_error |= internal
            device = params.get("device")
            result.outputs.append(f"[on {device}] {message}" if device and device != "cpu" else message)


def _feedback(excinfo: pytest.ExceptionInfo | None) -> tuple[str, bool]:
    """The student's feedback for a failed check, and whether the grader itself broke."""
    if excinfo is None:
        return "The check did not run.", True
    exc = excinfo.value
    if isinstance(exc, Failure):
        return str(exc), False
    if isinstance(exc, StudentError):
        return exc.explain(), False
    return f"Internal grader error ({type(exc).__name__}: {exc}); this is not your fault, tell your instructor.", True
