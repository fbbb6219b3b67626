"""A run's grading workers start while the zygote still imports and probes, and none is sent a submission
before the probe found that sandboxes hold (LocalPool.warm, then LocalPool.ready)."""

from __future__ import annotations

import threading

import pytest

from autograder.pool import batch
from autograder.model.results import GradedSubmission
from autograder.model.submission import Submission
from autograder.pool.worker import WorkerError, WorkerSettings
from autograder.isolation.protocol import SandboxBreach


class _Zygote:
    """Probes only once a worker has been started meanwhile; then holds, or finds a breach."""

    isolation = "a fake zygote"

    def __init__(self, events: list[str], started: threading.Event, breach: bool = False):
        self.events, self.started, self.breach = events, started, breach

    def wait_ready(self) -> list[str]:
        assert self.started.wait(30), "no worker was started while the zygote probed"
        self.events.append("probed")
        if self.breach:
            raise SandboxBreach("the probe read the graders")
        return []

    def close(self) -> None:
        self.events.append("zygote closed")


class _Worker:
    def __init__(self, events: list[str], started: threading.Event):
        self.events = events
        events.append("worker started")
        started.set()

    def ready(self) -> list[str]:
        return []

    def grade(self, submission: dict, parts: tuple[str, ...]) -> dict:
        self.events.append(f"graded {submission['id']}")
        return GradedSubmission(submission["id"]).to_json()

    def close(self) -> None:
        self.events.append("worker closed")


@pytest.fixture
def pool(monkeypatch):
    events: list[str] = []
    started = threading.Event()
    monkeypatch.setattr(batch.WorkerProcess, "local", classmethod(lambda cls, *_: _Worker(events, started)))
    pool = batch.LocalPool(jobs=1)
    pool.settings = WorkerSettings()  # no real zygote nor workers' parent: each test sets pool._zygote
    pool.events, pool.started = events, started
    yield pool
    pool.close()


def test_workers_start_during_the_probe_and_grade_only_after_it(pool):
    pool._zygote = _Zygote(pool.events, pool.started)
    pool.warm(2)  # two submissions: two workers (of the three a one-slot pool may run)
    graded = list(pool.grade([Submission("a"), Submission("b")], ("masks",)))
    assert sorted(g.id for g in graded) == ["a", "b"]
    events = pool.events
    assert events.count("worker started") == 2, events  # the warmed ones: no third was started
    assert events.index("worker started") < events.index("probed") < min(events.index("graded a"),
                                                                         events.index("graded b")), events
    assert pool.ready_at is not None


def test_a_breach_found_by_the_probe_reaches_no_warmed_worker(pool):
    pool._zygote = _Zygote(pool.events, pool.started, breach=True)
    pool.warm(1)
    with pytest.raises(WorkerError, match="grading refused") as refused:
        list(pool.grade([Submission("a")], ("masks",)))
    assert refused.value.fatal
    pool.close()
    assert not [e for e in pool.events if e.startswith("graded")], pool.events
    assert "worker closed" in pool.events, pool.events  # the warmed worker does not outlive the run
