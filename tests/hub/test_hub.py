"""The grading service on a real JupyterHub, with real Unix users (issue 56).

As root, the module makes real Unix users (two students, an instructor, the service's own user), a shared
nbgrader exchange (root-owned, 1777) and a course whose instructor releases the project's assignment
(tests/hub/harness.py). JupyterHub (the current release, pinned in requirements-dev.lock) runs on 127.0.0.1
with configurable-http-proxy (npm, pinned in tests/hub/package-lock.json), LocalProcessSpawner (each
student's JupyterLab as their Unix user, nbgrader's lab extension on) and the grading service in the
documented block (docs/service.md), as its own user. Each student runs nbgrader's commands as themselves
(runuser) and asks the service over HTTP with their own hub token. The browser test drives Debian's Chromium
through playwright-core (student_flow_hub.js) and keeps its step log and screenshots (HUB_SHOTS, or the
module's temporary folder: its path is printed).

Skipped, with the reason, when not root (users cannot be made), or when npm/node, jupyterhub or Chromium
are missing. Nothing is timed here: tools/bench_service.py prints how long grading takes.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import sqlite3
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness as H  # tests/hub is not a package: its helper sits beside it

pytestmark = pytest.mark.slow  # a JupyterHub, real users, nbgrader, the service's grading runs, a browser

A, B = H.STUDENTS
FINAL = {"graded", "refused", "failed"}
GRADING_S = 300  # a deadline that only fails the test: a poll ends as soon as its condition holds
NOTEBOOKS = ("attention.ipynb", "quiz.ipynb")
HOSTILE_CASE = H.ROOT / "tests" / "adversarial" / "cases" / "write_outside_scratch.py"


# --------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def site() -> Iterator[H.Site]:
    reason = H.missing_for_hub()
    if reason:
        pytest.skip(reason)
    H.install_node_modules()
    site = H.make_site()
    try:
        yield site
    finally:
        problems = H.remove_site(site)
        assert not problems, problems


@pytest.fixture(scope="module")
def hub(site) -> Iterator[H.Hub]:
    hub = H.Hub(site)
    hub.start()
    try:
        wait_for_service(hub)
        yield hub
    finally:
        hub.stop()


def wait_for_service(hub: H.Hub) -> None:
    H.poll("the service's page to answer through the hub", lambda: hub.service("api/mine", A)[0] == 200,
           H.HUB_START_S)


def mine(hub: H.Hub, user: str) -> dict[str, Any]:
    status, reply = hub.service("api/mine", user)
    assert status == 200, (status, reply)
    assert isinstance(reply, dict) and reply["user"] == user, reply
    return reply


def the_class(hub: H.Hub) -> list[dict[str, Any]]:
    status, reply = hub.service("api/class", H.INSTRUCTOR)
    assert status == 200, (status, reply)
    return reply["submissions"]


def ids(hub: H.Hub, user: str) -> set[int]:
    return {s["id"] for s in mine(hub, user)["submissions"]}


def wait_for_new(hub: H.Hub, user: str, before: set[int], count: int = 1) -> list[dict[str, Any]]:
    """The user's submissions not in ``before``, once ``count`` of them are there and all done with."""
    def done():
        new = [s for s in mine(hub, user)["submissions"] if s["id"] not in before]
        return new if len(new) >= count and all(s["state"] in FINAL for s in new) else None

    return H.poll(f"{count} new submission(s) of {user} to be done", done, GRADING_S, 0.5)


def honest(site: H.Site, user: str) -> None:
    """The user fetches (once) and writes the solution into every answer cell."""
    H.fetch(site, user)
    H.write_answers(site, user, H.solution_answers())


def untouched(site: H.Site, user: str) -> None:
    """The user fetches (once) and leaves the notebooks as released (every answer cell a stub)."""
    folder = H.fetch(site, user)
    entry = pwd.getpwnam(user)
    for name in ("attention.ipynb", "quiz.ipynb"):
        shutil.copyfile(site.course_root / "release" / H.ASSIGNMENT / name, folder / name)
        os.chown(folder / name, entry.pw_uid, entry.pw_gid)


def checks_of(row: dict[str, Any]) -> list[tuple]:
    return [(c["part"], c["name"], c["passed"], c["score"]) for c in row["checks"]]


@pytest.fixture(scope="module")
def solo_a(site, hub) -> dict[str, Any]:
    """A's honest submission, graded alone: (its row, the feedback files A fetched)."""
    honest(site, A)
    before = ids(hub, A)
    H.submit(site, A)
    [row] = wait_for_new(hub, A, before)
    assert row["state"] == "graded", row
    return row


# --------------------------------------------------------------------------
# 1. two students


def test_the_service_runs_as_its_own_user(site, hub):
    """The hub started the service (the documented block) as the service's own Unix user, not as root."""
    running = H.service_process_users(site)
    assert running, "no `autograder serve` process for this site"
    assert set(running.values()) == {pwd.getpwnam(H.SERVICE_USER).pw_uid}, running


def test_two_students_see_only_their_own(site, hub, solo_a):
    assert solo_a["score"] == solo_a["out_of"] > 0, solo_a  # the solution: full marks
    # B submits the notebooks as released: a different result, B's own
    untouched(site, B)
    before_b = ids(hub, B)
    H.submit(site, B)
    [row_b] = wait_for_new(hub, B, before_b)
    assert row_b["state"] == "graded" and row_b["score"] < solo_a["score"], row_b

    # B: only B's own, on api/mine and on the page; the class is refused
    b_rows = mine(hub, B)["submissions"]
    assert {r["id"] for r in b_rows} == before_b | {row_b["id"]}
    assert solo_a["id"] not in {r["id"] for r in b_rows}
    status, reply = hub.service("api/class", B)
    assert status == 403, (status, reply)
    status, page = hub.service("", B)
    assert status == 200 and B in page and A not in page, page[:2000]
    # A: A's own, not B's
    a_rows = mine(hub, A)["submissions"]
    assert solo_a["id"] in {r["id"] for r in a_rows} and row_b["id"] not in {r["id"] for r in a_rows}
    status, page = hub.service("", A)
    assert status == 200 and A in page and B not in page, page[:2000]
    # the instructor: both, on api/class and on the page
    everyone = the_class(hub)
    assert {(r["student"], r["id"]) for r in everyone} >= {(A, solo_a["id"]), (B, row_b["id"])}, everyone
    status, page = hub.service("", H.INSTRUCTOR)
    assert status == 200 and A in page and B in page, page[:2000]
    # nobody logged in: nothing (the API says 403; the page sends to the hub's login)
    status, reply = hub.service("api/mine", None)
    assert status == 403, (status, reply)
    status, reply = hub.service("api/class", None)
    assert status == 403, (status, reply)
    status, content, headers = hub.request("GET", hub.service_prefix, follow=False)
    assert status in (302, 303) and "/hub/" in headers.get("location", ""), (status, headers)

    # feedback through nbgrader's own path: each fetches their own and only that
    a_files = H.fetch_feedback(site, A)
    b_files = H.fetch_feedback(site, B)
    assert a_files and b_files, (a_files, b_files)
    a_text = "\n".join(p.read_text(errors="replace") for p in a_files)
    b_text = "\n".join(p.read_text(errors="replace") for p in b_files)
    assert A in a_text or "attention" in a_text
    assert A not in b_text and B not in a_text
    assert not set(p.read_bytes() for p in a_files) & set(p.read_bytes() for p in b_files)
    # B cannot list the feedback folder (nbgrader's mode): the only way to a file is its hash
    proc = H.as_user(B, ["ls", str(site.feedback)], site, check=False)
    assert proc.returncode != 0, proc.stdout


# --------------------------------------------------------------------------
# 2. a restart


def db_rows(site: H.Site, student: str) -> list[tuple]:
    """(key, state, finished) of the student's rows in the service's own record (root reads it)."""
    with sqlite3.connect(f"file:{site.state / 'queue.sqlite3'}?mode=ro", uri=True) as db:
        return db.execute("SELECT key, state, finished FROM submissions WHERE student = ? ORDER BY id",
                          (student,)).fetchall()


def test_a_submission_made_while_the_service_is_down_is_graded_once(site, hub, solo_a):
    honest(site, A)
    before = ids(hub, A)
    feedback_before = set(os.listdir(site.feedback))
    hub.stop()  # the hub stops the service it started (SIGTERM)
    assert not H.service_process_users(site), "the service outlived the hub"
    key = H.submit(site, A)
    hub.start()
    wait_for_service(hub)
    [row] = wait_for_new(hub, A, before)
    assert row["state"] == "graded" and checks_of(row) == checks_of(solo_a), row
    rows = [r for r in db_rows(site, A) if r[0] == key]
    assert len(rows) == 1 and rows[0][1] == "graded", rows
    assert len(set(os.listdir(site.feedback)) - feedback_before) == len(NOTEBOOKS)  # one file per notebook
    # once more: stopped and started again, it is not graded again
    hub.stop()
    hub.start()
    wait_for_service(hub)
    H.poll("the service to have scanned the exchange again", lambda: hub.service("api/mine", B)[0] == 200, 60)
    assert [r for r in db_rows(site, A) if r[0] == key] == rows
    assert [r for r in mine(hub, A)["submissions"] if r["id"] == row["id"]] == [row]


# --------------------------------------------------------------------------
# 3. a hostile submission among honest ones


def hostile_answer(site: H.Site, token: str) -> str:
    """tests/adversarial's write_outside_scratch (every place it must not write, and a few of this site's:
    A's home, the exchange, the feedback folder, the service's state), then an infinite loop."""
    text = HOSTILE_CASE.read_text()
    text = (text.replace("@TOKEN@", token).replace("@ROOT@", str(H.ROOT)).replace("@OUT@", str(site.state))
            .replace("@SUBS@", str(site.inbound)))
    extra = [site.home(A) / f"adv-pwned-{token}", site.exchange / f"adv-pwned-{token}",
             site.feedback / f"adv-pwned-{token}", site.state / f"adv-pwned-{token}"]
    text = text.replace("_targets = [", "_targets = [" + "".join(f"{str(p)!r}, " for p in extra), 1)
    return text + "\nwhile True:\n    pass\n"


def marker_files(site: H.Site, token: str) -> list[str]:
    found = []
    for top in ("/tmp", "/var/tmp", "/dev/shm"):
        found += [os.path.join(top, n) for n in os.listdir(top) if token in n]
    for top, prune in ((site.base, ()), (H.ROOT, (".git", ".venv", "node_modules", "site"))):
        for folder, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d not in prune]
            found += [os.path.join(folder, n) for n in dirs + files if token in n]
    return found


def test_a_hostile_submission_costs_only_itself(site, hub, solo_a):
    token = secrets.token_hex(6)
    honest(site, B)
    H.write_answers(site, B, {"attention": {"masks-causal_mask": hostile_answer(site, token)}})
    honest(site, A)
    before_a, before_b = ids(hub, A), ids(hub, B)
    H.submit(site, B)
    H.submit(site, A)
    [row_a] = wait_for_new(hub, A, before_a)
    [row_b] = wait_for_new(hub, B, before_b)
    assert row_a["state"] == "graded", row_a
    assert checks_of(row_a) == checks_of(solo_a) and row_a["score"] == solo_a["score"], (row_a, solo_a)
    assert row_b["state"] in ("failed", "refused") or row_b["score"] == 0, row_b
    assert not marker_files(site, token), marker_files(site, token)
    # printed, not asserted (no timing is): how long each waited and took, from the service's own record
    for row in (row_b, row_a):
        print(f"\n  row {row['id']} ({row['state']}): " + ", ".join(
            f"{k} {v}" for k, v in zip(("submitted", "admitted", "finished"), db_times(site, row["id"]))))


def db_times(site: H.Site, row_id: int) -> tuple:
    with sqlite3.connect(f"file:{site.state / 'queue.sqlite3'}?mode=ro", uri=True) as db:
        return db.execute("SELECT submitted, admitted, finished FROM submissions WHERE id = ?", (row_id,)).fetchone()


# --------------------------------------------------------------------------
# 4. impersonation


def test_a_folder_named_for_another_student_is_refused(site, hub, solo_a):
    honest(site, B)
    before_a = ids(hub, A)
    feedback_before = set(os.listdir(site.feedback))
    cached_a = H.fetch_feedback(site, A)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f %Z")
    forged = site.inbound / f"{A}+{H.ASSIGNMENT}+{stamp}+forged"
    # B makes it: inbound/ is writable by every student (nbgrader's mode 2733)
    H.as_user(B, ["cp", "-r", str(site.home(B) / H.ASSIGNMENT), str(forged)], site)
    H.as_user(B, ["sh", "-c", f"printf %s '{stamp}' > '{forged}/timestamp.txt'"], site)
    assert forged.stat().st_uid == pwd.getpwnam(B).pw_uid

    def refused():
        rows = [r for r in the_class(hub) if r["state"] == "refused" and r["submitted"].startswith(
            datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S.%f %Z").strftime("%Y-%m-%dT%H:%M:%S"))]
        return rows or None

    [row] = H.poll("the forged folder to be refused", refused, GRADING_S, 0.5)
    assert row.get("score") is None and row["state"] == "refused", row
    assert ids(hub, A) == before_a  # never A's
    status, page = hub.service("", A)
    assert status == 200 and f"Submitted {row['submitted']}" not in page, page[:3000]
    assert page.count("<h2>Submitted ") == len(before_a)  # A's own submissions, and only them
    assert set(os.listdir(site.feedback)) == feedback_before  # no feedback written for it
    assert H.fetch_feedback(site, A) == cached_a


# --------------------------------------------------------------------------
# 5. the browser


@pytest.fixture(scope="module")
def shots(site) -> Path:
    folder = Path(os.environ.get("HUB_SHOTS") or site.base.parent / f"{site.base.name}-browser")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_student_in_the_browser(site, hub, shots):
    """Log in, Assignments tab, fetch, answer the causal mask, save, submit, feedback, the service's page."""
    reason = H.missing_for_browser()
    if reason:
        pytest.skip(reason)
    H.fetch_feedback(site, A)  # what is due from earlier tests: only the browser's submission is new
    shutil.rmtree(site.home(A) / H.ASSIGNMENT)  # fetched again, in the Assignments tab
    H.write_lab_settings(site, A)
    before = ids(hub, A)
    proc, shown = H.run_browser(hub, A, shots)
    print(f"\nthe browser's step log and screenshots: {shots}")
    for entry in shown.get("steps", []):
        print(f"  [{entry['seconds']:6.1f} s] {entry['step']}: {entry['detail']}")
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}\n--- hub log:\n{hub.log_tail()}"
    assert [s["step"] for s in shown["steps"]] == [
        "login-form", "jupyterlab", "assignments-tab", "fetched", "answer-typed", "saved", "submitted",
        "feedback-available", "feedback-fetched", "feedback-open", "service-page"]
    # the answer typed in the browser is what was saved, and what was submitted
    import nbformat

    index, answer = H.answer_cell("attention", "masks-causal_mask")
    saved = nbformat.read(site.home(A) / H.ASSIGNMENT / "attention.ipynb", as_version=4)
    assert saved.cells[index].source == answer
    [row] = wait_for_new(hub, A, before)
    assert row["state"] == "graded", row
    mask_checks = [c for c in row["checks"] if c["name"].startswith("causal_mask")]
    assert mask_checks and all(c["passed"] for c in mask_checks), row["checks"]
    assert 0 < row["score"] < row["out_of"], row  # one answer of many
    # what the student saw: the feedback (nbgrader's path) and the service's page with this submission graded
    assert "causal_mask" in shown["feedbackText"], shown["feedbackText"][:2000]
    assert "graded" in shown["servicePage"] and A in shown["servicePage"], shown["servicePage"][:2000]
    assert B not in shown["servicePage"]
