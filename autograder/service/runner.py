"""The service's loop: poll the exchange, record what is new, grade fair batches, write the feedback each
student may see now, and (under a hub) serve the page. `python -m autograder serve --config service.toml`.

Batches are graded at once, up to `concurrent_batches`, each in a process of its own (grading.child, started
from a forkserver: the class run's pool sets signal handlers, which only a main thread may, and the service has
the page's thread). The loop keeps polling and admitting while they run, so a submission that runs to its time
budget holds back only the batch-mates admitted with it. A student with a submission in a batch being graded
gets none in another (queue.next_batch's `exclude`): a student's flood occupies one batch at most.

`--once` grades everything pending the same way, writes all feedback and returns (tests, cron). Without it the
loop runs until SIGTERM or SIGINT: it stops admitting, and each batch's process is interrupted as Ctrl-C
interrupts `grade` (its workers stopped); the rows they were grading stay 'grading', to be graded again when
the service comes back (queue.py). A batch's process that ends without an answer leaves its rows 'grading',
taken again by a later batch, and failed after `queue.MAX_DEATHS` such ends. Nothing is lost either way.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType
from typing import Any, Callable
from urllib.parse import urlparse

from ..api import RunError
from . import exchange, feedback, grading, render
from .config import ConfigError, ServiceConfig, load
from .exchange import ExchangeError
from .policy import student_view, view_name
from .queue import Queue, Row

REFUSED = 3  # the class run's status when this machine's sandboxes could reach what they must not (cli.py)


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@dataclass(eq=False)
class Batch:
    """A batch being graded: its process, the pipe it answers through, its rows."""

    process: BaseProcess
    answers: Connection
    rows: list[Row]


_context: Any = None


def context() -> Any:
    """The processes batches run in: from a forkserver (the grading modules loaded once), never a fork of the
    service itself, which has threads."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload([grading.__name__])
    return _context


def start_forkserver() -> None:
    """The forkserver started (the grading modules loaded in it) before the first submission arrives, not by it."""
    context()
    from multiprocessing import forkserver

    forkserver.ensure_running()


@dataclass
class Service:
    """One service: its configuration, its queue, its clock."""

    config: ServiceConfig
    clock: Callable[[], datetime] = utc_now
    tell: Callable[[str], None] = say
    queue: Queue = field(init=False)

    def __post_init__(self) -> None:
        self.queue = Queue(self.config.state)
        self._secret: str | None = None
        self.unwritten = 0  # feedback files that could not be written in the last pass (tried again next pass)
        self._last_trouble = ""
        self.batches: list[Batch] = []  # being graded, each in its own process
        self.stopping = False  # set by a stop: a batch's process that ends now was interrupted, not dead
        self._hold_until = 0.0  # after a run that could not go on: no batch admitted before (time.monotonic)

    def trouble(self, line: str) -> None:
        """A problem of the service's own (a folder it cannot list or write), said when it starts or changes,
        not at every poll."""
        if line != self._last_trouble:
            self.tell(f"error: {line}")
            self._last_trouble = line

    def secret(self) -> str:
        if self._secret is None:
            self._secret = self.config.secret()
        return self._secret

    # ---- one step of each kind

    def poll(self) -> int:
        """Records the exchange's new submissions; returns how many."""
        found = exchange.scan(self.config.exchange, self.config.course, self.config.assignment, self.queue.keys())
        for f in found:
            if f.refused:
                self.tell(f"refused {f.key}: {f.refused}")
        return self.queue.record(found, self.clock())

    def admit(self) -> int:
        """Starts batches while fewer than `concurrent_batches` are being graded; returns how many rows they took."""
        taken = 0
        while len(self.batches) < self.config.concurrent_batches and time.monotonic() >= self._hold_until:
            batch = self.start_batch()
            if batch is None:
                break
            taken += len(batch.rows)
        return taken

    def start_batch(self) -> Batch | None:
        """The next fair batch (rows left 'grading' first), none of a student being graded, started in a process
        of its own; None when there is nothing to grade now."""
        busy = {row.student for batch in self.batches for row in batch.rows}
        size = grading.batch_size(self.config, self.queue.waiting_students(busy),
                                  self.config.concurrent_batches - len(self.batches))
        rows = self.queue.next_batch(self.config.policy, self.clock(), size, exclude=busy)
        if not rows:
            return None
        self.tell(f"grading {len(rows)}: {', '.join(f'{r.student} ({r.key})' for r in rows)}")
        answers, answer = context().Pipe(duplex=False)
        process = context().Process(target=grading.child, args=(self.config, rows, self.secret(), answer),
                                    name=f"autograder-batch-{rows[0].id}", daemon=False)
        try:
            process.start()
        finally:
            answer.close()
        batch = Batch(process, answers, rows)
        self.batches.append(batch)
        return batch

    def collect(self, timeout: float | None, wake: list[Any] | None = None) -> int:
        """Waits up to `timeout` seconds (None: no limit) for a batch to answer or end (or for `wake` to be
        readable), and stores what every batch that did answered; returns how many rows it stored or gave back.
        Raises RunError for a batch whose run could not start or go on (its rows stay 'grading')."""
        waited: list[Any] = [*(b.answers for b in self.batches), *(b.process.sentinel for b in self.batches),
                             *(wake or [])]
        if waited:
            wait(waited, timeout)
        elif timeout:
            time.sleep(timeout)
        done = 0
        for batch in list(self.batches):
            reply: Any = None
            try:
                if batch.answers.poll():
                    reply = batch.answers.recv()
                elif batch.process.is_alive():
                    continue
                elif batch.answers.poll():  # it answered, then ended, between the two looks
                    reply = batch.answers.recv()
            except (EOFError, OSError):
                reply = None
            self.batches.remove(batch)
            self._end(batch)
            done += self._store(batch, reply)
        return done

    def _end(self, batch: Batch) -> None:
        batch.answers.close()
        batch.process.join(30)
        if batch.process.is_alive():
            batch.process.kill()
            batch.process.join()

    def _store(self, batch: Batch, reply: Any) -> int:
        now = self.clock()
        keys = {row.id: row.key for row in batch.rows}
        if reply is None:
            if self.stopping:  # interrupted by the stop: graded again at the next start
                return 0
            failed = set(self.queue.died(keys, now))
            self.tell(f"the batch of {', '.join(keys.values())} ended without an answer (exit status "
                      f"{batch.process.exitcode}): " + ("; ".join(f"{keys[i]} failed" for i in sorted(failed))
                                                        or "graded again"))
            return len(failed)
        if reply[0] == "error":
            self._hold_until = time.monotonic() + self.config.poll_seconds
            raise RunError(str(reply[1]), int(reply[2]) if reply[2] is not None else 1)
        for row_id, result, problem, targets in grading.answered(reply[1]):
            if targets is not None:
                self.queue.set_targets(row_id, targets)
            if result is not None:
                if not self.queue.finish(row_id, result, now):
                    self.tell(f"{keys[row_id]}: already graded; this result is not stored")
            else:
                self.queue.fail(row_id, problem, now)
                self.tell(f"{keys[row_id]}: {problem}")
        return len(keys)

    def stop_batches(self) -> None:
        """Interrupts every batch being graded as Ctrl-C interrupts `grade`: SIGINT to its process group, its
        workers with it; their rows stay 'grading'."""
        self.stopping = True
        for batch in self.batches:
            if batch.process.is_alive() and batch.process.pid is not None:
                try:
                    os.killpg(batch.process.pid, signal.SIGINT)
                except OSError:  # not its group's leader yet: nothing of its run started
                    batch.process.terminate()
        for batch in self.batches:
            self._end(batch)
        self.batches.clear()

    def grade_batch(self) -> int:
        """Grades the next fair batch in its own process and stores it; returns how many rows it took."""
        batch = self.start_batch()
        if batch is None:
            return 0
        while batch in self.batches:
            self.collect(None)
        self.write_feedback()
        return len(batch.rows)

    def write_feedback(self) -> int:
        """Writes the nbgrader feedback file of each submission whose view changed (graded, refused or waiting
        since, or the due date passed); returns how many were written."""
        now = self.clock()
        view = view_name(self.config.policy, now)
        written = self.unwritten = 0
        for row in self.queue.unshown(view):
            shown = f"{view}/{row.state}"
            targets = row.targets or self._targets(row)
            if targets:
                page = render.feedback_page(self.config.assignment, student_view(row.seen(), self.config.policy, now))
                try:
                    feedback.write(self.config.exchange, self.config.course, targets, page)
                except OSError as exc:  # left unshown: written at the next pass, once the folder allows it
                    self.unwritten += 1
                    self.trouble(f"{feedback.folder(self.config.exchange, self.config.course)}: cannot write "
                                 f"feedback there ({exc.strerror or exc}); docs/service.md says what it needs")
                    continue
                written += 1
            self.queue.mark_shown(row.id, shown)
        return written

    def _targets(self, row: Row) -> list[str]:
        """The feedback files of a submission never graded (waiting, refused for the limit): its folder is read
        for nbgrader's secret, within bounds, as for grading."""
        read = exchange.read(self.config.exchange, self.config.course, row.key)
        if isinstance(read, str):
            return []
        with tempfile.TemporaryDirectory(dir=self.config.state) as staged:
            for name, data in read.files.items():
                (Path(staged) / name).write_bytes(data)
            found = feedback.targets(self.config.course, self.config.assignment, row.student, read, Path(staged))
        self.queue.set_targets(row.id, found)
        return found

    def once(self) -> int:
        """Everything pending graded (up to `concurrent_batches` batches at once) and every feedback written,
        then return; the number of rows taken."""
        self.poll()
        total = 0
        try:
            while True:
                total += self.admit()
                if not self.batches:
                    break
                self.collect(None)
                self.write_feedback()
        finally:
            self.stop_batches()
        self.write_feedback()
        return total


def main(path: Path, once: bool = False) -> int:
    """`python -m autograder serve --config PATH [--once]`: 2 for a mistake in the configuration, else `serve`'s."""
    try:
        loaded = load(path)
    except ConfigError as exc:
        say(f"error: {exc}")
        return 2
    return serve(loaded, once)


def _enterable_folder(config: ServiceConfig) -> None:
    """Each batch's process starts in the service's current folder, so this account must be able to enter it. A
    hub-managed service inherits the hub's folder unless its entry sets "cwd", and a hub running as root may
    keep that folder private. In that case the service works in its own state folder from the start, on the
    main thread, before anything runs; then no course nbgrader_config.py is read for the quiz's counting, so
    it says what to set."""
    here = os.getcwd()
    if os.access(here, os.R_OK | os.X_OK):
        return
    os.chdir(config.state)  # once, before any thread or process: the service's own folder, which it owns
    say(f"note: this account cannot enter the folder it was started in ({here}): working in {config.state}; set "
        "\"cwd\" in the service's entry of jupyterhub_config.py to the course's root, so that its nbgrader_config.py "
        "decides whether the quiz counts")


def serve(config: ServiceConfig, once: bool = False) -> int:
    """The command `serve`: 0 on a clean stop (or `--once` done), 1 when grading cannot run on this machine."""
    service = Service(config)
    try:
        service.secret()
    except ValueError as exc:
        say(f"error: {exc}")
        return 2
    _enterable_folder(config)
    start_forkserver()
    if once:
        try:
            graded = service.once()
        except KeyboardInterrupt:  # its batches were interrupted as Ctrl-C interrupts `grade`
            say("interrupted: what was being graded is graded again at the next run")
            return 130
        except RunError as exc:
            say(f"error: {exc}")
            return exc.status or 1
        except (ExchangeError, OSError) as exc:
            say(f"error: {exc}")
            return 1
        say(f"graded {graded} submission(s); feedback written to {feedback.folder(config.exchange, config.course)}")
        if service.unwritten:
            say(f"error: {service.unwritten} submission(s)' feedback could not be written")
            return 1
        return 0
    return _loop(service)


def hub_address() -> tuple[str, int] | None:
    """Where the hub asks the service to listen (JUPYTERHUB_SERVICE_URL), or None outside a hub."""
    url = os.environ.get("JUPYTERHUB_SERVICE_URL")
    if not url or not os.environ.get("JUPYTERHUB_API_TOKEN"):
        return None
    parsed = urlparse(url)
    return parsed.hostname or "127.0.0.1", parsed.port or (443 if parsed.scheme == "https" else 80)


def _loop(service: Service) -> int:
    stop = threading.Event()
    woken, wake = os.pipe()  # a stop wakes the loop where it waits on its batches
    os.set_blocking(woken, False)
    os.set_blocking(wake, False)

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()
        service.stopping = True
        try:
            os.write(wake, b"\0")
        except OSError:
            pass

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    server = None
    address = hub_address()
    try:
        if address is not None:
            from . import web  # jupyterhub's service authentication: only where a hub runs the service

            app = web.make_app(web.Site(service.queue, service.config, service.clock),
                               os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/autograder/"))
            server = web.Server(app, *address)
            try:
                server.start()
            except OSError as exc:
                service.tell(f"error: cannot serve the page on {address[0]}:{address[1]} ({exc.strerror or exc})")
                server = None
                return 1
            service.tell(f"serving the page on {address[0]}:{address[1]}")
        else:
            service.tell("no JupyterHub around (JUPYTERHUB_SERVICE_URL unset): grading and writing feedback, no page")
        while not stop.is_set():
            try:
                service.poll()
            except ExchangeError as exc:
                service.trouble(str(exc))
            try:
                service.admit()
                service.collect(service.config.poll_seconds, wake=[woken])
            except RunError as exc:
                if exc.status == REFUSED:  # this machine's sandbox is too weak: no try will do better
                    service.tell(f"error: {exc}")
                    return REFUSED
                service.trouble(f"{exc} (trying again)")
            except OSError as exc:  # its own state folder full or unwritable: the rows wait, 'grading'
                service.trouble(f"{exc} (trying again)")
            service.write_feedback()
            try:
                while os.read(woken, 64):
                    pass
            except OSError:
                pass
    finally:
        service.stop_batches()
        if server is not None:
            server.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.close(woken)
        os.close(wake)
        service.tell("stopped; what was being graded is graded again at the next start")
    return 0
