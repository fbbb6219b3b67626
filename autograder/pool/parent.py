"""The workers' parent: the process that every local grading worker of a run is forked from.

It imports torch, then forks the run's zygote (which so starts with torch imported, and with nothing
else: no grader, no reference, no secret), then imports the graders and collects them into a pytest
session once, and forks each grading worker from inside that session: a worker starts at once,
collection paid for all. `python -m autograder.pool.parent FD` runs it, with the zygote's environment
(no secret: a worker is sent the run's settings over its own socket), so that the zygote it forks
holds nothing a zygote started on its own would not.

The run's line to it carries, in order: one zygote request (`ZYGOTE` and the zygote's socket, then
its configuration in a frame), then worker requests (`WORKER` and the worker's two sockets: to the
run, to the zygote). Each is answered by the pid (8 bytes) and a pidfd of the process it forked.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import traceback
from typing import Any, Callable

ZYGOTE, WORKER = b"Z", b"W"


class ForkedProcess:
    """A process the workers' parent forked, seen as a subprocess.Popen is (wait, kill) through its
    pidfd. It is not our child: its exit status is unknown (`wait` returns None)."""

    returncode = None

    def __init__(self, pid: int, pidfd: int):
        self.pid, self._pidfd = pid, pidfd

    def wait(self, timeout: float | None = None) -> None:
        if self._pidfd >= 0 and not select.select([self._pidfd], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired(f"process {self.pid}", timeout or 0)

    def kill(self) -> None:
        if self._pidfd >= 0:
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def __del__(self) -> None:
        if self._pidfd >= 0:
            os.close(self._pidfd)
            self._pidfd = -1


class _Pending:
    """The zygote the parent is asked to fork before it can answer (it imports torch first): its
    process is read from the parent's answer when first needed."""

    returncode = None

    def __init__(self, resolve: Callable[[], ForkedProcess | None]):
        self._resolve = resolve

    def wait(self, timeout: float | None = None) -> None:
        process = self._resolve()
        if process is not None:
            process.wait(timeout)

    def kill(self) -> None:
        process = self._resolve()
        if process is not None:
            process.kill()


class WorkersParent:
    """The run's handle on the workers' parent; it starts importing at once."""

    def __init__(self) -> None:
        from ..isolation.sandbox import zygote_environment

        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen([sys.executable, "-m", "autograder.pool.parent", str(theirs.fileno())],
                                        pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, env=zygote_environment(), cwd="/")
        theirs.close()
        self.sock = ours
        self._lock = threading.Lock()  # one request and its answer at a time (workers start on threads)
        self._zygote_unread = False  # asked for, its answer not read yet
        self._zygote: ForkedProcess | None = None

    def fork_zygote(self, configuration: bytes, line: socket.socket) -> _Pending:
        """The run's zygote, forked once the parent has imported torch; `line` is its control socket.
        Returns at once: the process is read from the answer when first needed."""
        from ..isolation import frames

        with self._lock:
            socket.send_fds(self.sock, [ZYGOTE], [line.fileno()])
            frames.send_frame(self.sock, configuration)
            self._zygote_unread = True
        return _Pending(self._zygote_process)

    def fork_worker(self, run_line: socket.socket, zygote_line: socket.socket) -> ForkedProcess:
        """A grading worker that talks to the run on `run_line` and gets its sandboxes on `zygote_line`.
        Raises RuntimeError when the parent is gone."""
        with self._lock:
            self._read_zygote()
            socket.send_fds(self.sock, [WORKER], [run_line.fileno(), zygote_line.fileno()])
            process = self._answer()
        if process is None:
            raise RuntimeError("the workers' parent died")
        return process

    def _zygote_process(self) -> ForkedProcess | None:
        with self._lock:
            self._read_zygote()
            return self._zygote

    def _read_zygote(self) -> None:
        if self._zygote_unread:
            self._zygote_unread = False
            self._zygote = self._answer()

    def _answer(self) -> ForkedProcess | None:
        try:
            reply, fds, _, _ = socket.recv_fds(self.sock, 8, 1)
        except OSError:
            return None
        if len(reply) != 8 or not fds:
            for fd in fds:
                os.close(fd)
            return None
        return ForkedProcess(struct.unpack("<q", reply)[0], fds[0])

    def close(self) -> None:
        from ..isolation.sandbox import wait_or_kill

        self.sock.close()
        wait_or_kill(self.process, 30)


# ---------------------------------------------------------------- in the workers' parent


def main(fd: int) -> None:
    from ..isolation.confinement import die_with_parent, keep_memory_private

    die_with_parent()
    sys.dont_write_bytecode = True
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run stops it; see `_fork` for its children
    control = socket.socket(fileno=fd)
    import torch  # noqa: F401 - once, for the zygote forked next and for the workers

    if not _fork_zygote(control, interrupt):
        return
    keep_memory_private()  # from here on it holds the graders
    # collecting asks whether CUDA is there: through NVML, so that a worker forked afterwards can still use it
    os.environ["PYTORCH_NVML_BASED_CUDA_CHECK"] = "1"
    import importlib

    from ..engine import session
    from ..engine.plugin import GradingPlugin
    from .worker import PRELOAD

    for module in PRELOAD:
        importlib.import_module(module)
    plugin = GradingPlugin()
    session.in_session(plugin, lambda by_part: _serve(control, plugin, by_part, interrupt))


def _serve(control: socket.socket, plugin: Any, by_part: dict, interrupt: Any) -> None:
    """Fork a worker for every request, inside the collected session; once the run closes the line, end
    at once (nothing to tear down: pytest's session and the interpreter's teardown would only delay
    the run)."""
    _fork_workers(control, plugin, by_part, interrupt)
    os._exit(0)


def _fork_zygote(control: socket.socket, interrupt: Any) -> bool:
    """Fork the zygote the run asked for first; False when the run went away."""
    from ..isolation import frames

    try:
        message, fds, _, _ = socket.recv_fds(control, 1, 1)
        configuration = frames.recv_frame(control) if message == ZYGOTE and len(fds) == 1 else None
    except OSError:
        return False
    if configuration is None:
        return False

    def serve_sandboxes() -> None:
        from ..isolation import zygote

        zygote.run(fds[0], configuration)

    return _answer(control, _fork(control, interrupt, serve_sandboxes, fds))


def _fork_workers(control: socket.socket, plugin: Any, by_part: dict, interrupt: Any) -> None:
    """Fork a worker for every request until the run closes the line."""
    import gc

    gc.freeze()  # what every worker inherits: no collection in one of them walks or copies it
    while True:
        _reap()
        if not select.select([control], [], [], 1.0)[0]:
            continue
        try:
            message, fds, _, _ = socket.recv_fds(control, 1, 2)
        except OSError:
            return
        if not message:
            return
        if message != WORKER or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            continue

        def grade() -> None:
            from .worker import forked_main

            forked_main(fds[0], fds[1], plugin, by_part)  # noqa: B023 - run by the child _fork makes now

        if not _answer(control, _fork(control, interrupt, grade, fds)):
            return


def _end_quietly(signum: int, frame: Any) -> None:
    """A child's Ctrl-C: it ends at once and says nothing (the run says what is kept and how to finish)."""
    os._exit(128 + signum)


def _fork(control: socket.socket, interrupt: Any, child: Callable[[], None], fds: list[int]) -> int:
    """Fork a process that runs `child` and then ends (it never returns here); it ignores SIGINT where the run
    does, and else ends on it at once; the run's line and `fds`, which are the child's now, are closed on
    this side. The child's pid.
    What stopped a child is printed on the run's standard error before it ends (`os._exit` would lose it)."""
    pid = os.fork()
    if pid == 0:
        control.close()
        signal.signal(signal.SIGINT, signal.SIG_IGN if interrupt == signal.SIG_IGN else _end_quietly)
        status = 1
        try:
            child()
            status = 0
        except Exception:  # noqa: BLE001 - said, then the child ends with status 1
            traceback.print_exc()
            sys.stderr.flush()
        finally:
            os._exit(status)
    for fd in fds:
        os.close(fd)
    return pid


def _answer(control: socket.socket, pid: int) -> bool:
    """Tell the run the pid and a pidfd of what was forked; False when the run has gone away."""
    pidfd = os.pidfd_open(pid)  # before any reaping, so the pid cannot have been reused
    try:
        socket.send_fds(control, [struct.pack("<q", pid)], [pidfd])
    except OSError:
        return False
    finally:
        os.close(pidfd)
    return True


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


if __name__ == "__main__":
    main(int(sys.argv[1]))
