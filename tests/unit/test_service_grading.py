"""service/grading.py without grading: how many submissions a batch takes, and the answer a batch's process
sends back read as it was sent."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from autograder.api import CheckResult, GradedSubmission
from autograder.service import grading
from autograder.service.config import ServiceConfig
from autograder.service.queue import Row

NOW = datetime(2026, 12, 10, 12, 0, tzinfo=timezone.utc)


def config(tmp_path, **changes) -> ServiceConfig:
    return ServiceConfig(tmp_path / "exchange", "course101", "attention", tmp_path / "state", tmp_path / "secret",
                         **changes)


@pytest.mark.parametrize("cores, concurrent, students, free, size", [
    (2, 2, 1, 2, 1),     # a lone submission: a batch of its own, at once
    (2, 2, 2, 2, 1),     # two students, two free batches: one each
    (2, 2, 10, 2, 4),    # a burst: their share, up to four per worker
    (2, 2, 3, 1, 3),
    (16, 2, 1, 2, 8),    # one per worker of the batch at least
    (16, 2, 100, 2, 32),
    (1, 2, 5, 2, 3),
])
def test_a_batch_takes_one_per_worker_or_its_share_of_a_burst(tmp_path, monkeypatch, cores, concurrent, students,
                                                              free, size):
    monkeypatch.setattr(grading, "jobs", lambda: cores)
    assert grading.batch_size(config(tmp_path, concurrent_batches=concurrent), students, free) == size


def test_on_a_dask_cluster_a_batch_is_large(tmp_path):
    assert grading.batch_size(config(tmp_path, dask="tcp://scheduler:8786"), 1, 2) == 64


def test_an_answer_is_read_back_as_it_was_sent():
    row = Row(7, "alice+attention+x", "alice", "alice", True, False, NOW, NOW, "grading", "", NOW, None, None, [], "")
    result = GradedSubmission("s7", [CheckResult("masks", "a check", 2, False, ["got 3"])])
    kind, items = grading.answer([grading.Graded(row, result=result, targets=["abc"]),
                                  grading.Graded(row, problem="Not graded: gone.")])
    assert kind == "graded"
    (first_id, first, _, targets), (_, second, problem, none) = grading.answered(items)
    assert first_id == 7 and first == result and targets == ["abc"]
    assert second is None and problem == "Not graded: gone." and none is None
