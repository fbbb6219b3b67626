"""The grading service end to end on this machine, without a hub: a real nbgrader exchange (generate_assignment,
release_assignment, then each student's fetch_assignment and submit, as tools/course.py runs them), then
`python -m autograder serve --once` (or the loop, stopped by SIGTERM), then `nbgrader fetch_feedback` as the
student. The page under a real JupyterHub is tests/hub/'s; its handlers are tests/unit/test_service_web.py's.

Nothing here waits on the clock: the loop is stopped when it says it is grading (its own line on stderr), and
every other step is a command that returns when it is done, or a look at the queue repeated until what it waits
for is there (its deadline only fails a test that would otherwise hang).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.service import config as service_config
from autograder.service.queue import Queue
from autograder.service.runner import Service
from tools import course as C

pytestmark = pytest.mark.slow  # nbgrader's commands and grading runs

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "attention"
CASES = ROOT / "tests" / "adversarial" / "cases"
HOSTILE = CASES / "kill_everything.py"
LOOPS = CASES / "infinite_loop_in_function.py"  # and loops at import too (hostile_student): until its time budget
DEADLINE = 900  # seconds: only a hung test reaches it


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """A course after generate_assignment and release_assignment: each test takes a copy of it."""
    work = tmp_path_factory.mktemp("service-course") / "work"
    course = C.Course.create(work)
    course.generate()
    course.release()
    return work


@pytest.fixture
def course(released, tmp_path) -> C.Course:
    shutil.copytree(released, tmp_path / "work", symlinks=True)
    return C.Course.open(tmp_path / "work")


def configure(course: C.Course, **policy) -> Path:
    """service.toml for `course`, with `policy`'s keys in [policy]."""
    secret = course.work / "secret"
    secret.write_text("s3cret-service\n")
    lines = ["[service]", f'exchange = "{course.exchange}"', f'course = "{course.course_id}"',
             f'assignment = "{ASSIGNMENT}"', f'state = "{course.work / "state"}"', f'secret_file = "{secret}"',
             "[policy]", *(f"{key} = {json.dumps(value)}" for key, value in policy.items())]
    path = course.work / "service.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def serve_once(path: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "autograder", "serve", "--config", str(path), "--once"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stderr


def fetch_feedback(course: C.Course, student: str) -> dict[str, str]:
    """`nbgrader fetch_feedback attention` as `student` (their cache and home); timestamp/notebook.html -> text."""
    home = course.home(student)
    course.nbgrader("fetch_feedback", ASSIGNMENT, "--student", student, f"--Exchange.root={course.exchange}",
                    f"--Exchange.cache={course.jupyter / 'data' / 'nbgrader_cache' / student}",
                    f"--Exchange.assignment_dir={home}", f"--CourseDirectory.course_id={course.course_id}", cwd=home)
    folder = home / ASSIGNMENT / "feedback"
    return {str(p.relative_to(folder)): p.read_text() for p in sorted(folder.glob("*/*.html"))}


def rows(course: C.Course) -> list:
    return Queue(course.work / "state").rows()


def hostile_student(name: str, case: Path = HOSTILE, then: str = "") -> C.SimulatedStudent:
    """A student whose masks answer holds an adversarial case (tests/adversarial/cases/) after the solution, and
    `then` after it."""
    cell, code = C.patch_cell(case.read_text() + then, C.solution_answers()[ASSIGNMENT], "masks", C.setup_code())
    return C.SimulatedStudent(name, "hostile: " + case.stem, {cell: code})


def serve_loop(path: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "autograder", "serve", "--config", str(path)], cwd=ROOT,
                            stderr=subprocess.PIPE, text=True)


def hear(loop: subprocess.Popen, start: str) -> list[str]:
    """The loop's stderr up to its first line that starts with `start`."""
    assert loop.stderr is not None
    heard = []
    for line in loop.stderr:
        heard.append(line)
        if line.startswith(start):
            return heard
    raise AssertionError(f"the loop ended without saying {start!r}: " + "".join(heard))


def stop(loop: subprocess.Popen) -> str:
    """SIGTERM; its status must be 0; the rest of what it said."""
    assert loop.stderr is not None
    loop.send_signal(signal.SIGTERM)
    rest = loop.stderr.read()
    assert loop.wait() == 0, rest
    assert "stopped" in rest
    return rest


RIGHT = C.SimulatedStudent("alice", "the solution")
NOTHING = C.SimulatedStudent("bob", "nothing done", untouched=frozenset({"*"}))


def test_each_student_fetches_their_own_feedback_and_a_hostile_one_costs_only_itself(course):
    """Two students and a hostile one submit through nbgrader; one `serve --once` grades all three in one run,
    and each student's `nbgrader fetch_feedback` shows their own score and nothing of the others'."""
    C.enrol(course, [RIGHT, NOTHING, hostile_student("mallory")])
    path = configure(course, before_due="all")
    serve_once(path)
    graded = {r.student: r for r in rows(course)}
    assert {s: r.state for s, r in graded.items()} == {"alice": "graded", "bob": "graded", "mallory": "graded"}
    alice, bob = graded["alice"].result, graded["bob"].result
    assert alice.total == alice.max_score > 0 and bob.total < alice.total
    alice_sees, bob_sees = fetch_feedback(course, "alice"), fetch_feedback(course, "bob")
    assert sorted(n.split("/")[1] for n in alice_sees) == ["attention.html", "quiz.html"]
    assert all(f"{alice.total:g} / {alice.max_score:g}" in text for text in alice_sees.values())
    assert all(f"{bob.total:g} / {bob.max_score:g}" in text for text in bob_sees.values())
    assert not set(alice_sees.values()) & set(bob_sees.values())  # B gets nothing of A's
    assert "graded 0 submission(s)" in serve_once(path)  # a second run grades nothing again
    assert [r.finished for r in rows(course)] == [r.finished for r in graded.values()]


def test_a_stop_loses_nothing_and_a_restart_grades_each_once(course):
    """The loop stopped by SIGTERM while grading; a submission made while it is down; both graded once after."""
    C.enrol(course, [RIGHT])
    path = configure(course)
    loop = serve_loop(path)
    hear(loop, "grading 1: alice")  # its own word that it took the submission
    stop(loop)
    (left,) = rows(course)
    assert left.state == "grading" and left.result is None  # it was being graded; nothing was stored
    C.enrol(course, [NOTHING])  # submitted while the service is down
    said = serve_once(path)
    assert any(line.startswith("grading ") and f"alice ({left.key})" in line for line in said.splitlines()), said
    after = {r.student: r for r in rows(course)}
    assert {s: r.state for s, r in after.items()} == {"alice": "graded", "bob": "graded"}
    assert after["alice"].id == left.id and len(rows(course)) == 2
    assert "graded 0 submission(s)" in serve_once(path)


def test_one_students_flood_does_not_delay_another_nor_takes_two_batches(course):
    """Alice submits ten times (copies in place of her nbgrader submission), then Bob once: Bob is graded at
    once, beside Alice's oldest; Alice never has two submissions being graded, however many batches run."""
    C.enrol(course, [RIGHT])
    inbound = course.exchange / course.course_id / "inbound"
    (first,) = inbound.iterdir()
    student, assignment, stamp, rest = first.name.split("+")
    for n in range(1, 10):
        shutil.copytree(first, inbound / f"{student}+{assignment}+{stamp.replace(' UTC', f'{n} UTC')}+{rest}")
    C.enrol(course, [NOTHING])
    service = Service(service_config.load(configure(course)), tell=lambda _line: None)
    assert service.poll() == 11
    oldest = min(r.submitted for r in rows(course) if r.student == "alice")
    try:
        service.admit()
        grading = [r for r in rows(course) if r.state == "grading"]
        assert sorted(r.student for r in grading) == ["alice", "bob"]
        assert oldest in {r.submitted for r in grading}
        while sum(r.state == "graded" for r in rows(course)) < 3:
            in_flight = [row.student for batch in service.batches for row in batch.rows]
            assert sorted(in_flight) == sorted(set(in_flight))
            assert [r.student for r in rows(course) if r.state == "grading"].count("alice") <= 1
            service.collect(None)
            service.admit()
    finally:
        service.stop_batches()
    graded = sorted((r.student, r.submitted) for r in rows(course) if r.state == "graded")
    assert [s for s, _ in graded] == ["alice", "alice", "bob"] and graded[0][1] == oldest


def test_a_hostile_submission_being_graded_does_not_delay_another_students(course):
    """Mallory's submission loops until its time budget ends it; Alice submits while it is being graded. The
    loop admits Alice's in a batch of its own: her feedback is written while Mallory's is still 'grading'."""
    C.enrol(course, [hostile_student("mallory", LOOPS, then="\nwhile True:\n    pass\n")])
    loop = serve_loop(configure(course, before_due="all"))
    try:
        hear(loop, "grading 1: mallory")
        C.enrol(course, [RIGHT])
        deadline = time.monotonic() + DEADLINE
        while not any(r.student == "alice" and r.state == "graded" for r in rows(course)):
            assert loop.poll() is None, "the loop ended"
            assert time.monotonic() < deadline, "alice's submission was never graded"
            time.sleep(0.2)
        by = {r.student: r for r in rows(course)}
        assert by["mallory"].state == "grading" and by["mallory"].result is None
        alice = by["alice"].result
        while not (seen := fetch_feedback(course, "alice")):  # her feedback follows her grade in the same pass
            assert time.monotonic() < deadline, "alice's feedback was never written"
            time.sleep(0.2)
        assert all(f"{alice.total:g} / {alice.max_score:g}" in text for text in seen.values())
        assert {r.student: r.state for r in rows(course)}["mallory"] == "grading"
    finally:
        if loop.poll() is None:
            stop(loop)
    assert {r.student: r.state for r in rows(course)} == {"mallory": "grading", "alice": "graded"}


@pytest.mark.parametrize("over_limit", ["wait", "refuse"])
def test_an_attempt_over_the_limit_waits_or_is_refused_and_the_student_is_told(course, over_limit):
    C.enrol(course, [RIGHT])
    C.Course.submit(course, "alice")  # again, from the same fetched folder
    serve_once(configure(course, attempts=1, period="day", over_limit=over_limit))
    first, second = rows(course)
    assert first.state == "graded"
    assert second.state == ("waiting" if over_limit == "wait" else "refused") and second.result is None
    told = [text for name, text in fetch_feedback(course, "alice").items() if name.endswith("attention.html")]
    assert len(told) == 2 and any("1 graded attempt per day" in text for text in told)


def test_what_students_see_follows_the_visibility_setting(course):
    """One graded submission, its feedback written for each view: received shows no score; checks shows which
    checks pass but none of the feedback that holds the hidden inputs; all shows it."""
    C.enrol(course, [C.with_patch("carol", "scales by d", "scaling_divide_by_d")])
    seen = {}
    for view in ("checks", "received", "all"):
        serve_once(configure(course, before_due=view))
        seen[view] = fetch_feedback(course, "carol")
    (row,) = rows(course)
    outputs = [o for c in row.result.checks if not c.passed for o in c.outputs if len(o) > 20]
    assert outputs, "the buggy submission fails checks with feedback"
    score = f"{row.result.total:g} / {row.result.max_score:g}"
    assert all(score not in text and "<table>" not in text for text in seen["received"].values())
    assert all(score in text and "failed" in text for text in seen["checks"].values())
    assert not any(o[:40] in text for o in outputs for text in seen["checks"].values())
    from html import escape

    assert all(any(escape(o)[:40] in text for o in outputs) for text in seen["all"].values())


@pytest.mark.skipif(os.geteuid() != 0, reason="a folder owned by another account is made with os.chown, as root")
def test_a_submission_named_for_another_student_is_refused_and_never_graded_as_them(course):
    """Mallory (here the system's `nobody`) makes a folder named for Alice: refused, recorded, no feedback."""
    C.enrol(course, [RIGHT])
    inbound = course.exchange / course.course_id / "inbound"
    (folder,) = inbound.iterdir()
    nobody = pwd.getpwnam("nobody")
    for path in (folder, *folder.iterdir()):
        os.chown(path, nobody.pw_uid, nobody.pw_gid)
    serve_once(configure(course))
    (row,) = rows(course)
    assert row.state == "refused" and row.result is None and "named for alice but made by nobody" in row.message
    assert not list((course.exchange / course.course_id / "feedback").glob("*.html"))


def test_a_configuration_mistake_is_a_usage_error_naming_the_key(course):
    path = configure(course)
    path.write_text(path.read_text() + "atempts = 3\n")
    done = subprocess.run([sys.executable, "-m", "autograder", "serve", "--config", str(path), "--once"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "unknown key policy.atempts" in done.stderr


def test_under_a_hub_the_page_is_served_behind_its_login_and_a_stop_is_clean(course):
    """With the hub's variables set (no hub: nobody can log in), the loop serves its page on the service URL's
    port: the API answers 403 and the page redirects to the hub's login; SIGTERM stops both, status 0."""
    import socket
    import urllib.error
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}", "JUPYTERHUB_API_TOKEN": "not-a-hub",
           "JUPYTERHUB_API_URL": "http://127.0.0.1:9/hub/api", "JUPYTERHUB_SERVICE_PREFIX": "/services/autograder/",
           "JUPYTERHUB_CLIENT_ID": "service-autograder", "JUPYTERHUB_BASE_URL": "/",
           "JUPYTERHUB_OAUTH_CALLBACK_URL": "/services/autograder/oauth_callback"}
    loop = subprocess.Popen([sys.executable, "-m", "autograder", "serve", "--config", str(configure(course))],
                            cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    assert loop.stderr is not None
    for line in loop.stderr:
        if line.startswith("serving the page"):
            break
    base = f"http://127.0.0.1:{port}/services/autograder/"

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    codes = {}
    for path in ("api/mine", "api/class", ""):
        try:
            codes[path] = opener.open(base + path).status
        except urllib.error.HTTPError as exc:
            codes[path] = (exc.code, exc.headers.get("Location", ""))
    loop.send_signal(signal.SIGTERM)
    rest = loop.stderr.read()
    assert loop.wait() == 0, rest
    assert codes["api/mine"][0] == 403 and codes["api/class"][0] == 403
    assert codes[""][0] == 302 and "/hub/api/oauth2/authorize" in codes[""][1]
