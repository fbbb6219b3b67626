"""service/runner.py without grading: polling the exchange, and the feedback files written for each view, again
when the view changes and at the next pass when the folder did not allow it. (Grading: tests/test_service.py.)"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from autograder.api import CheckResult, GradedSubmission
from autograder.service.config import Policy, ServiceConfig
from autograder.service.exchange import inbound
from autograder.service.runner import Service

NOW = datetime(2026, 12, 10, 12, 0, tzinfo=timezone.utc)
STAMP = "2026-12-10 11:00:00.000000 UTC"
NOTEBOOK = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def service(tmp_path, clock=lambda: NOW, **policy) -> tuple[Service, list[str]]:
    config = ServiceConfig(tmp_path / "exchange", "course101", "attention", tmp_path / "state", tmp_path / "secret",
                           policy=Policy(**policy))
    said: list[str] = []
    return Service(config, clock=clock, tell=said.append), said


def submit(tmp_path, student="alice"):
    folder = inbound(tmp_path / "exchange", "course101") / f"{student}+attention+{STAMP}+r4nd"
    folder.mkdir(parents=True)
    (folder / "attention.ipynb").write_bytes(NOTEBOOK)
    (folder / "submission_secret.txt").write_text(student * 16)  # nbgrader's is random: one per submission
    return folder


def graded(svc: Service) -> None:
    (row,) = svc.queue.next_batch(svc.config.policy, NOW, size=4)
    svc.queue.finish(row.id, GradedSubmission(f"s{row.id}", [CheckResult("masks", "a check", 2, False, ["got 3"])]),
                     NOW)


def test_no_inbound_folder_yet_is_nothing_to_grade(tmp_path):
    svc, _ = service(tmp_path)
    assert svc.poll() == 0


def test_feedback_is_written_once_per_view_and_again_after_the_due_date(tmp_path):
    clock = [NOW]
    svc, _ = service(tmp_path, clock=lambda: clock[0], due=NOW + timedelta(days=1), before_due="received",
                     after_due="all")
    submit(tmp_path)
    assert svc.poll() == 1
    graded(svc)
    assert svc.write_feedback() == 1 and svc.write_feedback() == 0
    (page,) = (tmp_path / "exchange" / "course101" / "feedback").glob("*.html")
    assert "got 3" not in page.read_text() and "Score" not in page.read_text()
    clock[0] = NOW + timedelta(days=2)
    assert svc.write_feedback() == 1
    assert "got 3" in page.read_text() and "0 / 2" in page.read_text()


def test_feedback_that_cannot_be_written_is_said_once_and_written_at_a_later_pass(tmp_path):
    svc, said = service(tmp_path)
    submit(tmp_path)
    svc.poll()
    graded(svc)
    blocker = tmp_path / "exchange" / "course101" / "feedback"
    blocker.write_text("not a folder")
    assert svc.write_feedback() == 0 and svc.write_feedback() == 0 and svc.unwritten == 1
    assert len([line for line in said if "cannot write feedback" in line]) == 1
    blocker.unlink()
    assert svc.write_feedback() == 1 and svc.unwritten == 0


def test_a_waiting_submission_is_told_why_in_its_feedback(tmp_path):
    svc, _ = service(tmp_path, attempts=1, period="day", over_limit="wait")
    submit(tmp_path)
    svc.poll()
    graded(svc)
    folder = submit(tmp_path, "alice-again")
    folder.rename(folder.with_name(folder.name.replace("alice-again", "alice").replace("r4nd", "s3cnd")))
    assert svc.poll() == 1
    assert svc.queue.next_batch(svc.config.policy, NOW, size=4) == []
    assert svc.write_feedback() == 2
    texts = [p.read_text() for p in (tmp_path / "exchange" / "course101" / "feedback").glob("*.html")]
    assert len(texts) == 2 and any("waits, and is graded from 2026-12-11" in text for text in texts)


def test_a_folder_this_account_cannot_enter_is_left_for_the_state_folder(tmp_path, monkeypatch, capsys):
    """A hub running as root starts its service in the hub's own folder, which may be closed to the service's
    account; each batch's process must be able to start there (the hub tests found it: every batch died)."""
    import os

    from autograder.service import runner

    svc, _ = service(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(os, "access", lambda path, mode: path != str(tmp_path))
    runner._enterable_folder(svc.config)
    assert os.getcwd() == str(svc.config.state)
    assert "cannot enter the folder it was started in" in capsys.readouterr().err
    monkeypatch.setattr(os, "access", lambda path, mode: True)
    runner._enterable_folder(svc.config)  # an enterable folder is kept
    assert os.getcwd() == str(svc.config.state)
