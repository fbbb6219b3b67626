"""How fast the grading service makes feedback visible (issue 56): prints two figures.

    .venv/bin/python -m tools.bench_service            # as root: real users and a real JupyterHub
    .venv/bin/python -m tools.bench_service --standalone

(a) one submission: from the start of `nbgrader submit` until the feedback is visible: the service's
    api/mine shows it graded (with the hub), and `nbgrader fetch_feedback`, run as the student over and over,
    finds it (both are printed);
(b) a burst: 10 students submit 3 times each, all at once (30 submissions): from the first `nbgrader submit`
    until all 30 are visible.

As root (and with npm/node for the proxy) it builds what tests/hub builds: real Unix users, the exchange shared
by them, the course released by its instructor, JupyterHub with the service in its documented block, run as
its own user; each student runs nbgrader as themselves. Elsewhere, or with --standalone, the exchange belongs to
this account, the students are names (`nbgrader submit --student`), and the service runs as `serve` with its
polling loop and no page; visibility is `fetch_feedback` finding the file. Nothing is asserted: it prints.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "hub"))
import harness as H  # noqa: E402 - tests/hub's harness: users, exchange, course, hub

BURST_STUDENTS = 10
BURST_EACH = 3
DEADLINE_S = 900


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def say(message: str) -> None:
    print(message, flush=True)


# --------------------------------------------------------------------------
# with real users and the hub


class RealUsers:
    def __init__(self) -> None:
        self.students = [f"ag_bench_{i:02d}" for i in range(BURST_STUDENTS)]
        self.site = H.make_site(self.students)
        self.hub = H.Hub(self.site)

    def start(self) -> None:
        H.install_node_modules()
        self.hub.start()
        H.poll("the service", lambda: self.hub.service("api/mine", self.students[0])[0] == 200, 60)
        for student in self.students:
            H.fetch(self.site, student)
            H.write_answers(self.site, student, H.solution_answers())
            self.hub.token(student)

    def stop(self) -> None:
        self.hub.stop()
        problems = H.remove_site(self.site)
        if problems:
            say(f"clean-up: {problems}")

    def submit(self, student: str) -> str:
        return H.submit(self.site, student)

    def graded(self, student: str) -> int:
        """How many of the student's submissions api/mine shows done."""
        status, reply = self.hub.service("api/mine", student)
        return sum(s["state"] in ("graded", "failed", "refused") for s in reply["submissions"]) if status == 200 else 0

    def fetched(self, student: str, key: str) -> bool:
        stamp = key.split("+")[2]
        return any(stamp in str(p) for p in H.fetch_feedback(self.site, student))


# --------------------------------------------------------------------------
# standalone: one account, the service's polling loop, no page


class Standalone:
    def __init__(self, work: Path) -> None:
        from tools import course as C

        self.students = [f"student{i:02d}" for i in range(BURST_STUDENTS)]
        self.work = work
        self.course = C.Course.create(work / "course", course_id=H.COURSE_ID)
        self.course.generate()
        self.course.release()
        self.state = work / "state"
        secret = work / "secret"
        secret.write_text("bench\n")
        (work / "service.toml").write_text(
            "[service]\n"
            f'exchange = "{self.course.exchange}"\ncourse = "{H.COURSE_ID}"\nassignment = "{H.ASSIGNMENT}"\n'
            f'state = "{self.state}"\nsecret_file = "{secret}"\ninstructors = "instructors"\npoll_seconds = 0.5\n'
            'dask = ""\n\n[policy]\nattempts = 0\nperiod = "day"\nover_limit = "wait"\nbefore_due = "all"\n'
            'after_due = "all"\n')
        self.process: subprocess.Popen | None = None
        self.done: dict[str, int] = {}

    def start(self) -> None:
        from tools import course as C

        answers = C.solution_answers(self.course.root / "assignments" / H.ASSIGNMENT)
        for student in self.students:
            folder = self.course.fetch(student)
            for notebook, cells in answers.items():
                C.fill_in(folder / f"{notebook}.ipynb", cells)
        env = {k: v for k, v in self.course.env().items() if not k.startswith("JUPYTERHUB_")}
        log = (self.work / "service.log").open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "autograder", "serve", "--config",
                                         str(self.work / "service.toml")], env=env, stdout=log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=120)

    def submit(self, student: str) -> str:
        before = set(os.listdir(self.course.exchange / H.COURSE_ID / "inbound"))
        self.course.submit(student)
        made = set(os.listdir(self.course.exchange / H.COURSE_ID / "inbound")) - before
        return made.pop()

    def _fetch_feedback(self, student: str) -> list[Path]:
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange import ExchangeFactory

        from nbgrader.exchange.abc.exchange import ExchangeError

        config = self.course._exchange_config(student)
        factory = ExchangeFactory(config=config)
        try:
            factory.FetchFeedback(coursedir=CourseDirectory(config=config), authenticator=Authenticator(config=config),
                                  config=config).start()
        except ExchangeError:  # no feedback/ folder yet: nothing to fetch
            return []
        return sorted((self.course.home(student) / H.ASSIGNMENT / "feedback").glob("*/*.html"))

    def fetched(self, student: str, key: str) -> bool:
        stamp = key.split("+")[2]
        return any(stamp in str(p) for p in self._fetch_feedback(student))

    def graded(self, student: str) -> int:
        return len({p.parent.name for p in self._fetch_feedback(student)})


# --------------------------------------------------------------------------


def until(what: str, condition: Callable[[], bool]) -> float:
    H.poll(what, condition, DEADLINE_S, 0.1)
    return time.monotonic()


def one_submission(setup) -> None:
    student = setup.students[0]
    before = setup.graded(student)
    start = time.monotonic()
    key = setup.submit(student)
    submitted = time.monotonic()
    lines = [f"(a) one submission ({student}): nbgrader submit took {submitted - start:.1f} s"]
    if isinstance(setup, RealUsers):
        graded = until("api/mine to show it", lambda: setup.graded(student) > before)
        lines.append(f"    graded on the service's api/mine {graded - start:.1f} s after nbgrader submit began")
    fetched = until("fetch_feedback to find it", lambda: setup.fetched(student, key))
    lines.append(f"    nbgrader fetch_feedback found it {fetched - start:.1f} s after nbgrader submit began")
    say("\n".join(lines) + f"\n    {load()}")


def burst(setup) -> None:
    before = {s: setup.graded(s) for s in setup.students}
    start = time.monotonic()
    keys: dict[str, list[str]] = {}
    lock = threading.Lock()

    def student_submits(student: str) -> None:
        for _ in range(BURST_EACH):
            key = setup.submit(student)
            with lock:
                keys.setdefault(student, []).append(key)

    with ThreadPoolExecutor(BURST_STUDENTS) as pool:
        list(pool.map(student_submits, setup.students))
    submitted = time.monotonic()
    total = BURST_STUDENTS * BURST_EACH
    visible = until(f"all {total} to be visible",
                    lambda: all(setup.graded(s) - before[s] >= BURST_EACH for s in setup.students))
    say(f"(b) a burst of {total} submissions from {BURST_STUDENTS} students: all {total} visible "
        f"{visible - start:.1f} s after the first nbgrader submit began, {visible - submitted:.1f} s after the last "
        f"returned (the {total} nbgrader submit, {BURST_STUDENTS} at a time, took {submitted - start:.1f} s); "
        f"{load()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--standalone", action="store_true", help="one account, the service's loop, no hub")
    args = parser.parse_args(argv)
    reason = None if args.standalone else H.missing_for_hub()
    say(f"{os.cpu_count()} CPUs, {load()}")
    if reason or args.standalone:
        import tempfile

        if reason:
            say(f"standalone ({reason})")
        with tempfile.TemporaryDirectory(prefix="ag-bench-") as work:
            measure(Standalone(Path(work)))
        return 0
    say("real users and JupyterHub")
    measure(RealUsers())
    return 0


def measure(setup: RealUsers | Standalone) -> None:
    """Both figures on `setup`, started here and stopped whatever happens."""
    try:
        setup.start()
        one_submission(setup)
        burst(setup)
    finally:
        setup.stop()


if __name__ == "__main__":
    sys.exit(main())
