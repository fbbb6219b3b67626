"""service/exchange.py and service/feedback.py: inbound/ read within bounds, identity from the folder's owner,
feedback written where and as nbgrader's release_feedback writes it."""

from __future__ import annotations

import os
import pwd
import stat
from datetime import datetime, timezone

import pytest

from autograder.service import exchange, feedback

COURSE, ASSIGNMENT = "course101", "attention"
STAMP = "2026-12-07 10:11:12.123456 UTC"
NOTEBOOK = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def submit(root, student, stamp=STAMP, secret="ab" * 64, suffix="+Xy"):
    folder = exchange.inbound(root, COURSE) / f"{student}+{ASSIGNMENT}+{stamp}{suffix}"
    folder.mkdir(parents=True)
    (folder / "attention.ipynb").write_bytes(NOTEBOOK)
    (folder / "quiz.ipynb").write_bytes(NOTEBOOK)
    (folder / "selfcheck.py").write_text("print('not graded')\n")
    (folder / "timestamp.txt").write_text(stamp)
    if secret:
        (folder / "submission_secret.txt").write_text(secret)
    return folder


def test_scan_reads_nbgrader_names_and_leaves_the_rest(tmp_path):
    submit(tmp_path, "alice")
    submit(tmp_path, "bob", stamp="2026-12-07 09:00:00.000000 UTC", suffix="")
    (exchange.inbound(tmp_path, COURSE) / f"carol+other+{STAMP}").mkdir()
    (exchange.inbound(tmp_path, COURSE) / "no-plus-signs").mkdir()
    found = exchange.scan(tmp_path, COURSE, ASSIGNMENT)
    assert [f.student for f in found] == ["bob", "alice"]  # oldest first
    assert found[1].submitted == datetime(2026, 12, 7, 10, 11, 12, 123456, tzinfo=timezone.utc)
    assert exchange.scan(tmp_path, COURSE, ASSIGNMENT, seen={found[0].key}) == found[1:]


def test_the_services_own_account_is_one_shared_account(tmp_path):
    submit(tmp_path, "alice")
    (found,) = exchange.scan(tmp_path, COURSE, ASSIGNMENT)
    assert not found.refused and not found.verified  # the name is used, and marked unverified


def test_a_link_in_inbound_is_refused(tmp_path):
    real = submit(tmp_path, "alice")
    (exchange.inbound(tmp_path, COURSE) / f"bob+{ASSIGNMENT}+{STAMP}").symlink_to(real)
    refused = [f for f in exchange.scan(tmp_path, COURSE, ASSIGNMENT) if f.student == "bob"]
    assert refused and "link" in refused[0].refused


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="making a folder owned by another account needs root")


@needs_root
def test_a_folder_named_for_another_user_than_its_owner_is_refused(tmp_path):
    nobody = pwd.getpwnam("nobody")
    folder = submit(tmp_path, "alice")
    os.chown(folder, nobody.pw_uid, nobody.pw_gid)
    (found,) = exchange.scan(tmp_path, COURSE, ASSIGNMENT)
    assert found.refused and "named for alice but made by nobody" in found.refused and not found.verified


@needs_root
def test_a_folder_owned_by_its_student_is_verified_and_a_file_slipped_in_is_refused(tmp_path):
    nobody = pwd.getpwnam("nobody")
    folder = submit(tmp_path, "nobody")
    for path in (folder, *folder.iterdir()):
        os.chown(path, nobody.pw_uid, nobody.pw_gid)
    (found,) = exchange.scan(tmp_path, COURSE, ASSIGNMENT)
    assert found.verified and not found.refused
    assert not isinstance(exchange.read(tmp_path, COURSE, found.key), str)
    daemon = pwd.getpwnam("daemon")
    os.chown(folder / "quiz.ipynb", daemon.pw_uid, daemon.pw_gid)  # another account's file, slipped in
    assert "not by the folder's owner" in exchange.read(tmp_path, COURSE, found.key)


def test_read_takes_the_notebooks_and_nbgrader_files_only(tmp_path):
    folder = submit(tmp_path, "alice")
    read = exchange.read(tmp_path, COURSE, folder.name)
    assert not isinstance(read, str)
    assert sorted(read.files) == ["attention.ipynb", "quiz.ipynb"] and read.secret == "ab" * 64
    assert read.timestamp == STAMP


def test_a_linked_notebook_is_refused_unread(tmp_path):
    folder = submit(tmp_path, "alice")
    (folder / "quiz.ipynb").unlink()
    (folder / "quiz.ipynb").symlink_to("/etc/passwd")
    assert "quiz.ipynb could not be opened" in exchange.read(tmp_path, COURSE, folder.name)


def test_a_notebook_of_too_many_json_values_is_refused_unread(tmp_path):
    folder = submit(tmp_path, "alice")
    (folder / "attention.ipynb").write_bytes(b"[" + b"null," * 3_000_000 + b"null]")
    assert "JSON values" in exchange.read(tmp_path, COURSE, folder.name)


def test_feedback_is_where_nbgrader_looks_for_it(tmp_path):
    from nbgrader.utils import notebook_hash

    folder = submit(tmp_path, "alice")
    read = exchange.read(tmp_path, COURSE, folder.name)
    hashes = feedback.targets(COURSE, ASSIGNMENT, "alice", read, folder)
    assert hashes == [notebook_hash(secret="ab" * 64, notebook_id=n) for n in ("attention", "quiz")]
    written = feedback.write(tmp_path, COURSE, hashes, "<p>ok</p>")
    out = tmp_path / COURSE / "feedback"
    assert written == [out / f"{h}.html" for h in hashes] and written[0].read_text() == "<p>ok</p>"
    assert stat.S_IMODE(out.stat().st_mode) == 0o711  # nobody lists it; a student opens the file they can name
    assert stat.S_IMODE(written[0].stat().st_mode) == 0o644
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{h}.html" for h in hashes)  # no temporary left


def test_feedback_without_a_secret_takes_nbgrader_s_legacy_hash(tmp_path):
    from nbgrader.utils import make_unique_key, notebook_hash

    folder = submit(tmp_path, "alice", secret="")
    read = exchange.read(tmp_path, COURSE, folder.name)
    key = make_unique_key(COURSE, ASSIGNMENT, "attention", "alice", STAMP)
    assert feedback.targets(COURSE, ASSIGNMENT, "alice", read, folder)[0] == notebook_hash(
        path=str(folder / "attention.ipynb"), unique_key=key)
