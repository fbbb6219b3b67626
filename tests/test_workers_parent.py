"""A run's grading workers and its zygote come from one process, the workers' parent (pool.parent): it
forks the zygote once it has imported torch and nothing of the grader's, then collects the graders once
and forks every worker from inside that session. Nothing of it outlives the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.pool import batch
from autograder.model.submission import read_submission
from autograder.pool.worker import WorkerSettings
from autograder.graders.points import part_points

pytestmark = pytest.mark.slow

BASE = Path(__file__).parent / "corpus" / "base.py"


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("PPid:"))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return not any(line.startswith("State:") and line.split()[1] == "Z" for line in status)
    except FileNotFoundError:
        return False


def test_the_zygote_and_every_worker_come_from_the_workers_parent_and_go_with_the_run():
    pool = batch.LocalPool(jobs=1)
    submissions = [read_submission(BASE, "one"), read_submission(BASE, "two")]
    try:
        pool.start(WorkerSettings(secret="parent"))
        pool.warm(len(submissions))
        pool.ready()
        workers = [future.result() for future in pool._warming]
        parent = pool._parent.process.pid
        zygote = pool._zygote.process._resolve()
        assert zygote is not None, "the zygote was not forked by the workers' parent"
        assert _parent_of(zygote.pid) == parent
        assert [_parent_of(w._process.pid) for w in workers] == [parent, parent]
        graded = {g.id: g for g in pool.grade(submissions, ("masks",))}
        full = (part_points("masks"),) * 2
        assert {sid: g.part_scores()["masks"] for sid, g in graded.items()} == {"one": full, "two": full}
    finally:
        pool.close()
    assert not any(_alive(pid) for pid in (parent, zygote.pid, *(w._process.pid for w in workers)))

