"""One pytest session grades many submissions, each on its own: nothing carries over between them."""

from __future__ import annotations

from pathlib import Path

from autograder.engine.session import Job, grade_all, in_process_backend
from autograder.graders.points import part_points
from autograder.model.submission import read_submission
from autograder.isolation.limits import Limits

CORPUS = Path(__file__).resolve().parents[1] / "corpus"
MASKS = part_points("masks")  # set by the masks grader's checks, whatever they are


def test_one_session_grades_each_submission_independently(tmp_path):
    base = (CORPUS / "base.py").read_text()
    (tmp_path / "good.py").write_text(base)
    (tmp_path / "zeros.py").write_text(base + "\n\n" + (CORPUS / "buggy" / "masks_fill_zero.py").read_text())
    jobs = [Job(read_submission(tmp_path / name), "secret", ("masks",)) for name in ("good.py", "zeros.py", "good.py")]
    graded = []
    grade_all(jobs, in_process_backend(), Limits(call_seconds=30, budget_seconds=120), graded.append)
    first, buggy, again = graded
    assert [g.id for g in graded] == ["good", "zeros", "good"]
    assert first.part_scores()["masks"] == (MASKS, MASKS)
    assert buggy.part_scores()["masks"][0] < MASKS
    assert [c.to_gradescope() for c in again.checks] == [c.to_gradescope() for c in first.checks]
    assert not any(c.internal_error for g in graded for c in g.checks)


def test_only_the_parts_asked_for_are_graded(tmp_path):
    (tmp_path / "good.py").write_text((CORPUS / "base.py").read_text())
    graded = []
    grade_all([Job(read_submission(tmp_path / "good.py"), "s", ("quiz",))], in_process_backend(), Limits(),
              graded.append)
    assert set(graded[0].part_scores()) == {"quiz"}


def test_what_fails_on_one_submission_is_its_status_and_the_next_is_graded(tmp_path, monkeypatch):
    """A fault of the grader's own side on one submission's input (here the tampering scan raising) makes
    that submission a grader error; the session goes on and the next one is graded as it would be."""
    from autograder.engine import session
    from autograder.model import tampering

    real_scan = tampering.scan

    def scan(cells):
        if any("_BREAKS_THE_SCAN" in code for notebook in cells.values() for _, code in notebook):
            raise RecursionError("maximum recursion depth exceeded")
        return real_scan(cells)

    monkeypatch.setattr(session.tampering, "scan", scan)
    base = (CORPUS / "base.py").read_text()
    (tmp_path / "breaks.py").write_text(base + "\n_BREAKS_THE_SCAN = 1\n")
    (tmp_path / "good.py").write_text(base)
    graded = []
    grade_all([Job(read_submission(tmp_path / n), "s", ("masks",)) for n in ("breaks.py", "good.py")],
              in_process_backend(), Limits(call_seconds=30, budget_seconds=120), graded.append)
    assert [g.id for g in graded] == ["breaks", "good"]
    assert graded[0].error == "the grader failed on this submission (RecursionError)" and not graded[0].checks
    assert graded[1].part_scores()["masks"] == (MASKS, MASKS) and not graded[1].error


def test_a_submission_whose_files_break_the_reader_is_noted_and_the_class_is_planned(tmp_path, monkeypatch):
    from autograder.pool import batch

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("x = 2\n")
    real = batch.read_submission
    monkeypatch.setattr(batch, "read_submission", lambda path, sid, release: real(path, sid, release) if sid == "b" else 1 / 0)
    found = batch.plan([(tmp_path / "a.py", "a"), (tmp_path / "b.py", "b")], tmp_path / "out", ("masks",), False)
    assert [s.id for s in found.todo] == ["a", "b"]
    assert found.todo[0].problems == ["the grader's reader failed on its files (ZeroDivisionError), so it was not read"]


def test_a_notebook_that_could_not_be_read_says_so_once_with_the_reason(tmp_path):
    """Issue 53: a file that cannot be read says so once, with the reason. Every check of its parts said
    "`causal_average` is not defined: write it in its answer cell", which the student had done."""
    (tmp_path / "attention.ipynb").write_text('{"cells": [')
    graded = []
    grade_all([Job(read_submission(tmp_path / "attention.ipynb"), "s", ("masks",))], in_process_backend(), Limits(),
              graded.append)
    [result] = graded
    assert result.problems == ["attention.ipynb could not be read: not valid notebook JSON"]
    outputs = [c.to_gradescope()["output"] for c in result.checks]
    assert outputs and all(o.endswith("is not defined: your attention.ipynb was not read (the note at the top says why)")
                           for o in outputs), outputs[0]
