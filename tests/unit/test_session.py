"""One pytest session grades many submissions, each on its own: nothing carries over between them."""

from __future__ import annotations

from pathlib import Path

from autograder.core.session import Job, TimeLimits, grade_all, in_process_backend
from autograder.core.submission import read_submission

CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def test_one_session_grades_each_submission_independently(tmp_path):
    base = (CORPUS / "base.py").read_text()
    (tmp_path / "good.py").write_text(base)
    (tmp_path / "zeros.py").write_text(base + "\n\n" + (CORPUS / "buggy" / "masks_fill_zero.py").read_text())
    jobs = [Job(read_submission(tmp_path / name), "secret", ("masks",)) for name in ("good.py", "zeros.py", "good.py")]
    graded = []
    grade_all(jobs, in_process_backend(), TimeLimits(call_seconds=30, budget_seconds=120), graded.append)
    first, buggy, again = graded
    assert [g.id for g in graded] == ["good", "zeros", "good"]
    assert first.part_scores()["masks"] == (20.0, 20.0)
    assert buggy.part_scores()["masks"][0] < 20.0
    assert [c.to_gradescope() for c in again.checks] == [c.to_gradescope() for c in first.checks]
    assert not any(c.internal_error for g in graded for c in g.checks)


def test_only_the_parts_asked_for_are_graded(tmp_path):
    (tmp_path / "good.py").write_text((CORPUS / "base.py").read_text())
    graded = []
    grade_all([Job(read_submission(tmp_path / "good.py"), "s", ("quiz",))], in_process_backend(), TimeLimits(),
              graded.append)
    assert set(graded[0].part_scores()) == {"quiz"}
