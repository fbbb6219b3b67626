"""Grading one submission: open it part by part, run the graders, collect the checks."""

from __future__ import annotations

import io
import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pytest
import torch

from attention_ref import PARTS

from .plugin import CheckResult, GradingPlugin
from .student import Channel, Student, in_process_channel
from .submission import Submission

if TYPE_CHECKING:
    from .sandbox import Zygote

GRADERS_DIR = Path(__file__).resolve().parent / "graders"
REFERENCE_DIR = Path(__file__).resolve().parent.parent / "attention_ref"
ALL_PARTS = (*PARTS, "quiz")

# Opens a fresh channel to a new runtime for the submission; returns (channel, closer).
Backend = Callable[[], tuple[Channel, Callable[[], None]]]


@dataclass
class Graded:
    """The checks of one submission, by part."""

    submission: Submission
    checks: list[CheckResult] = field(default_factory=list)

    def part_scores(self) -> dict[str, tuple[float, float]]:
        scores: dict[str, tuple[float, float]] = {}
        for c in self.checks:
            got, most = scores.get(c.part, (0.0, 0.0))
            scores[c.part] = (got + (c.max_score if c.passed else 0.0), most + c.max_score)
        return scores

    @property
    def internal_error(self) -> bool:
        return any(c.internal_error for c in self.checks)


def injection(part: str) -> list[tuple[list[str], str]]:
    """The reference source of every other part, so one mistake costs points once."""
    if part == "quiz":
        return []
    return [(list(names), (REFERENCE_DIR / f"{other}.py").read_text()) for other, names in PARTS.items() if other != part]


def configure_grading_process() -> None:
    """One thread per grading process (workers run in parallel, and waking a thread pool on a
    busy machine costs more than the graders' small tensors), and no TF32 in reference values."""
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def in_process_backend() -> tuple[Channel, Callable[[], None]]:
    channel, _ = in_process_channel()
    return channel, lambda: None


def sandbox_backend(zygote: "Zygote") -> Backend:
    """Each part of a submission in its own sandboxed process (see autograder.sandbox)."""
    from .sandbox import SandboxChannel

    def open_channel() -> tuple[Channel, Callable[[], None]]:
        channel = SandboxChannel(zygote)
        return channel, channel.close

    return open_channel


def grade(submission: Submission, secret: str, parts: tuple[str, ...] = ALL_PARTS,
          backend: Backend = in_process_backend) -> Graded:
    """Run the graders of `parts` on `submission`; the plugin closes each part's channel after it."""

    def open_student(part: str) -> Student:
        channel, close = backend()
        student = Student(channel, close=close)
        student.load_errors = student.load(submission.cells_for(part), injection(part))
        return student

    plugin = GradingPlugin(open_student, f"{secret}\0{submission.id}")
    args = [str(GRADERS_DIR / f"test_{part}.py") for part in parts]
    args += ["-q", "-p", "no:cacheprovider", "--rootdir", str(GRADERS_DIR), "-c", str(GRADERS_DIR / "pytest.ini")]
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        status = pytest.main(args, plugins=[plugin])
    graded = Graded(submission, list(plugin.results.values()))
    if status not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED) or not graded.checks:
        raise RuntimeError(f"the graders could not run (pytest exit {status}):\n{log.getvalue()[-3000:]}")
    return graded
