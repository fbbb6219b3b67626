"""The service's loop: poll the exchange, record what is new, grade a fair batch, write the feedback each
student may see now, and (under a hub) serve the page. `python -m autograder serve --config service.toml`.

`--once` grades everything pending, writes all feedback and returns (tests, cron). Without it the loop runs
until SIGTERM or SIGINT: between batches it stops at once; during a batch the run is interrupted as Ctrl-C
interrupts `grade` (its workers stopped), and the rows it was grading stay 'grading', to be graded again
when the service comes back (queue.py). Nothing is lost either way.

Grading keeps the main thread (the class run's process pool sets signal handlers, which only the main thread
may); the page runs in a thread of its own (web.Server) and reads the queue through its own connections.
"""

from __future__ import annotations

import os
import signal
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType
from typing import Callable
from urllib.parse import urlparse

from ..api import RunError, RunInterrupted
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

    def grade_batch(self) -> int:
        """Grades the next fair batch (rows left 'grading' first); returns how many it took."""
        rows = self.queue.next_batch(self.config.policy, self.clock(), grading.batch_size(self.config))
        if not rows:
            return 0
        self.tell(f"grading {len(rows)}: {', '.join(f'{r.student} ({r.key})' for r in rows)}")
        for item in grading.grade(self.config, rows, self.secret(), tell=self.tell):
            now = self.clock()
            if item.targets is not None:
                self.queue.set_targets(item.row.id, item.targets)
            if item.result is not None:
                if not self.queue.finish(item.row.id, item.result, now):
                    self.tell(f"{item.row.key}: already graded; this result is not stored")
            else:
                self.queue.fail(item.row.id, item.problem, now)
                self.tell(f"{item.row.key}: {item.problem}")
        self.write_feedback()
        return len(rows)

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
        """Everything pending graded and every feedback written, then return; the number graded."""
        self.poll()
        total = 0
        while taken := self.grade_batch():
            total += taken
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


def serve(config: ServiceConfig, once: bool = False) -> int:
    """The command `serve`: 0 on a clean stop (or `--once` done), 1 when grading cannot run on this machine."""
    service = Service(config)
    try:
        service.secret()
    except ValueError as exc:
        say(f"error: {exc}")
        return 2
    if once:
        try:
            graded = service.once()
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
    busy = threading.Event()

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        stop.set()
        if busy.is_set():
            raise KeyboardInterrupt  # the class run stops its workers and raises RunInterrupted

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
            busy.set()
            try:
                taken = service.grade_batch()
            except (RunInterrupted, KeyboardInterrupt):
                break
            except RunError as exc:
                if exc.status == REFUSED:  # this machine's sandbox is too weak: no try will do better
                    service.tell(f"error: {exc}")
                    return REFUSED
                service.trouble(f"{exc} (trying again)")
                taken = 0
            except OSError as exc:  # its own state folder full or unwritable: the rows wait, 'grading'
                service.trouble(f"{exc} (trying again)")
                taken = 0
            finally:
                busy.clear()
            service.write_feedback()
            if not taken:
                stop.wait(service.config.poll_seconds)
    finally:
        if server is not None:
            server.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        service.tell("stopped; what was being graded is graded again at the next start")
    return 0
