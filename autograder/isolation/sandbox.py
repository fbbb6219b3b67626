"""The grader's side of the sandboxes: start a zygote, get sandboxes from it, talk to them.

A `Zygote` is one process per grading worker (see `zygote.py` for what runs in it). A
`SandboxChannel` is a channel (`proxy.Channel`) to one sandbox, for one part of one
submission: it sends requests, serves the callbacks a request makes, enforces the
request's deadline over the whole reply, and kills the sandbox (through a pidfd) when it
overruns. After a crash or a timeout the next request gets a fresh sandbox with the
submission's code loaded again, within a short limit; if that fails too, every later
request fails at once.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from . import protocol, wire
from .proxy import CallbackHandler, SandboxBreach

# What the zygote's environment keeps: what Python, torch and CUDA read; never AUTOGRADER_SECRET.
ENV_KEEP = ("PATH", "PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "LANG", "TZ", "TMPDIR")
ENV_KEEP_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "OMP_", "MKL_", "OPENBLAS_", "TORCH_", "PYTORCH_")
RELOAD_FLOOR_SECONDS = 2.0  # a reload after a crash may take this long, or 3 times the first load
FROM_SANDBOX_REPLY, FROM_SANDBOX_CALLBACK = b"R", b"C"


@dataclass(frozen=True)
class Limits:
    """What one sandbox (one part of one submission) may use."""

    call_seconds: float = 60.0
    cpu_seconds: int = 300
    memory_bytes: int = 4 * 2**30  # on top of what the interpreter and torch already map
    file_bytes: int = 16 * 2**20
    processes: int = 256
    scratch_bytes: int = 64 * 2**20  # all files together in the private /tmp (it is memory)


@dataclass
class _Process:
    """A sandbox as the grader sees it: a pidfd (race-free, valid across PID namespaces) or, failing that, a pid."""

    pid: int
    pidfd: int | None

    def kill(self) -> None:
        if self.pidfd is not None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)  # pid 1 of its namespace: all of it dies
            except ProcessLookupError:
                pass
            os.close(self.pidfd)
            self.pidfd = None
        if self.pid > 0:  # no PID namespace: its process group is the best we have
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.pid = 0


class Zygote:
    """The process that forks sandboxes; one per grading worker.

    `secrets` are paths no sandbox may see besides what the policy hides anyway (the reports,
    the submissions); `public` the helper files every sandbox finds in its scratch folder;
    `preload` the modules the zygote imports once for all. Raises `SandboxBreach` when the
    sandboxes could reach the reference or the graders, unless `allow_weak`."""

    def __init__(self, limits: Limits, secrets: Iterable[Path] = (), public: dict[str, bytes] | None = None,
                 preload: Iterable[str] = (), allow_weak: bool = False):
        self.limits = limits
        self.allow_weak = allow_weak
        self.config = wire.encode({
            "limits": [limits.cpu_seconds, limits.memory_bytes, limits.file_bytes, limits.processes, limits.scratch_bytes],
            "secrets": [str(p) for p in secrets], "public": dict(public or {}), "preload": list(preload),
            "probe": not allow_weak,
        })
        self.weaknesses: list[str] = []
        self._start()

    def _start(self) -> None:
        """Start the zygote; it imports and probes while the caller goes on (see `wait_ready`)."""
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autograder.isolation.zygote", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=_zygote_environment(),
            cwd="/",
        )
        self.process.stdin.write(self.config)
        self.process.stdin.close()
        theirs.close()
        self.sock = ours
        self._ready = False

    def wait_ready(self) -> list[str]:
        """Wait for the zygote's first message; returns what is weaker than full isolation.
        Raises SandboxBreach when sandboxes could reach what they must not (unless `allow_weak`)."""
        if self._ready:
            return self.weaknesses
        hello = wire.recv_frame(self.sock)  # once it has probed what isolation this machine allows
        if hello is None:
            self.close()
            raise RuntimeError(f"the sandbox zygote did not start (exit status {self.process.returncode})")
        facts = wire.decode(hello)
        self.weaknesses = list(facts.get("weaknesses", []))
        breaches = list(facts.get("breaches", []))
        if breaches and not self.allow_weak:
            self.close()
            raise SandboxBreach("sandboxes could reach what they must not: " + "; ".join(breaches))
        self._ready = True
        return self.weaknesses

    def spawn(self) -> tuple[socket.socket, _Process]:
        """A new sandbox: (socket to talk to it, the process to kill). Restarts a zygote that died."""
        try:
            self.wait_ready()
            return self._spawn()
        except (OSError, RuntimeError):
            self.close()
            self._start()  # one submission must never cost the next ones their sandboxes
            self.wait_ready()
            return self._spawn()

    def _spawn(self) -> tuple[socket.socket, _Process]:
        ours, theirs = socket.socketpair()
        socket.send_fds(self.sock, [b"spawn"], [theirs.fileno()])
        theirs.close()
        reply, fds, _, _ = socket.recv_fds(self.sock, 8, 1)
        if len(reply) != 8:
            ours.close()
            raise RuntimeError("the sandbox zygote died")
        (pid,) = struct.unpack("<q", reply)
        if pid < 0:
            ours.close()
            raise RuntimeError("the sandbox zygote could not fork")
        return ours, _Process(pid, fds[0] if fds else None)

    def close(self) -> None:
        self.sock.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class SandboxChannel:
    """A channel to one sandbox, replaced (code reloaded) after a crash or a timeout."""

    def __init__(self, zygote: Zygote):
        self.zygote = zygote
        self.sock: socket.socket | None = None
        self.process: _Process | None = None
        self.load_request: bytes | None = None  # the first request: what a fresh sandbox must run again
        self.load_seconds = 0.0
        self.broken: bytes | None = None  # the answer to every request once a reload failed

    def __call__(self, request: bytes, seconds: float, on_callback: CallbackHandler) -> bytes:
        if self.broken is not None:
            return self.broken
        if self.sock is None:
            self.sock, self.process = self.zygote.spawn()
            if self.load_request is not None:
                limit = min(seconds, max(RELOAD_FLOOR_SECONDS, 3 * self.load_seconds))
                reply = self._exchange(self.load_request, limit, on_callback)
                if self.sock is None:
                    self.broken = _error(protocol.CRASH, f"After a crash or a timeout, your code could not be loaded "
                                                         f"again within {limit:.3g} s, so nothing more of this part runs.")
                    return self.broken
                if request is self.load_request:
                    return reply
        if self.load_request is None:
            self.load_request = request
            start = time.monotonic()
            reply = self._exchange(request, seconds, on_callback)
            self.load_seconds = time.monotonic() - start
            return reply
        return self._exchange(request, seconds, on_callback)

    def _exchange(self, request: bytes, seconds: float, on_callback: CallbackHandler) -> bytes:
        assert self.sock is not None
        deadline = time.monotonic() + seconds
        try:
            wire.send_frame(self.sock, request)
            while True:
                frame = wire.recv_frame(self.sock, deadline=deadline)
                if frame is None:
                    return self._died(protocol.CRASH, "The submission's process died during this call (a crash, "
                                                      "os._exit, or the memory or CPU limit).")
                kind, body = frame[:1], frame[1:]
                if kind == FROM_SANDBOX_REPLY:
                    return body
                if kind != FROM_SANDBOX_CALLBACK:
                    raise wire.WireError("a frame of no known kind")
                message = wire.decode(body)
                if type(message) is not dict or message.get("op") != protocol.CALLBACK:
                    raise wire.WireError("a malformed callback")
                wire.send_frame(self.sock, wire.encode(protocol.ok(on_callback(message))))
        except (socket.timeout, TimeoutError):
            return self._died(protocol.TIMEOUT, f"The call did not finish within {seconds:.3g} s (an infinite loop?); "
                                                "it was stopped.")
        except (OSError, wire.WireError) as exc:
            return self._died(protocol.CRASH, f"The submission's process broke the connection ({exc}).")

    def _died(self, kind: str, message: str) -> bytes:
        self.close()
        return _error(kind, message)

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.process is not None:
            self.process.kill()
            self.process = None


def _error(kind: str, message: str) -> bytes:
    return wire.encode(protocol.error(kind, message))


def _zygote_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith(ENV_KEEP_PREFIXES)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written next to the package's modules
    return env
