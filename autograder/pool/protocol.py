"""The pool's protocol: what a class run (autograder/classrun.py) asks of the workers that grade, whether they
run on this machine (batch.LocalPool) or on a Dask cluster (cluster.DaskPool)."""

from __future__ import annotations

from typing import Iterator, Protocol

from ..model.results import GradedSubmission
from ..model.submission import Submission
from .worker import WorkerSettings


class Pool(Protocol):
    """Grading workers, used in this order: `begin`, `start`, `warm`, `ready`, `grade`, and `close` always."""

    weaknesses: set[str]  # how the sandboxes are weaker than they should be, as the workers said
    isolation: str  # what confines each sandbox, once known ("" before)
    ready_at: float | None  # when the first submission could go to a worker (time.monotonic)

    def begin(self) -> None:
        """Start what can start before the run's settings are known."""

    def start(self, settings: WorkerSettings) -> None:
        """Start the workers' side for `settings` (the caller goes on meanwhile)."""

    def warm(self, submissions: int) -> None:
        """Start ahead the workers that grading `submissions` will use."""

    def ready(self) -> str:
        """What confines each sandbox; raises WorkerError when grading must not start."""

    def grade(self, submissions: list[Submission], parts: tuple[str, ...]) -> Iterator[GradedSubmission]:
        """Each submission's result, in the order they finish."""

    def close(self) -> None:
        """Stop every worker; safe to call more than once."""
