"""The grader's side of the sandboxes: start a zygote, get sandboxes from it, talk to them.

A `Zygote` is the process that forks sandboxes (see `zygote.py` for what runs in it): one per run
on this machine, shared by its grading workers, each through a `ZygoteClient` of its own
(`Zygote.attach`). A `SandboxChannel` is a channel (`proxy.Channel`) to one sandbox, for one part
of one submission: it sends requests, serves the callbacks a request makes, enforces the
request's deadline over the whole reply, and kills the sandbox (through a pidfd) when it overruns.
After a crash or a timeout the next request gets a fresh sandbox with the submission's code loaded
again, within a short limit; if that fails too, every later request fails at once.

This module imports nothing heavy at first, so that a worker can start its zygote before it loads
torch itself; the wire format (which needs torch) is imported when the first request is sent.
"""

from __future__ import annotations

import base64
import json
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

from . import frames, protocol
from .limits import Limits
from .protocol import ATTACH, SPAWN, CallbackHandler, SandboxBreach

# What the zygote's environment keeps: what Python, torch and CUDA read; never AUTOGRADER_SECRET.
ENV_KEEP = ("PATH", "PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "LANG", "TZ", "TMPDIR")
ENV_KEEP_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "OMP_", "MKL_", "OPENBLAS_", "TORCH_", "PYTORCH_")
RELOAD_FLOOR_SECONDS = 2.0  # a reload after a crash may take this long, or 3 times the first load
FROM_SANDBOX_REPLY, FROM_SANDBOX_CALLBACK = b"R", b"C"


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


class ZygoteClient:
    """One process's line to the zygote: it asks for sandboxes on it."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def spawn(self) -> tuple[socket.socket, _Process]:
        """A new sandbox: (socket to talk to it, the process to kill)."""
        ours, theirs = socket.socketpair()
        try:
            socket.send_fds(self.sock, [SPAWN], [theirs.fileno()])
        finally:
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


class Zygote(ZygoteClient):
    """The zygote process and its owner's line to it.

    `secrets` are paths no sandbox may see besides what the policy hides anyway (the reports,
    the submissions); `public` the helper files every sandbox finds in its scratch folder;
    `preload` the modules the zygote imports once for all. `wait_ready` raises `SandboxBreach`
    when the sandboxes could reach the reference or the graders, unless `allow_weak`."""

    def __init__(self, limits: Limits, secrets: Iterable[Path | str] = (), public: dict[str, bytes] | None = None,
                 preload: Iterable[str] = (), allow_weak: bool = False):
        self.limits = limits
        self.allow_weak = allow_weak
        self.config = json.dumps({
            "limits": [limits.cpu_seconds, limits.memory_bytes, limits.file_bytes, limits.processes, limits.scratch_bytes],
            "secrets": [str(p) for p in secrets], "preload": list(preload), "probe": not allow_weak,
            "public": {name: base64.b64encode(data).decode() for name, data in (public or {}).items()},
        }).encode()
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
        super().__init__(ours)
        self._ready = False

    def wait_ready(self) -> list[str]:
        """Wait for the zygote's first message; returns what is weaker than full isolation.
        Raises SandboxBreach when sandboxes could reach what they must not (unless `allow_weak`)."""
        if self._ready:
            return self.weaknesses
        hello = frames.recv_frame(self.sock)  # once it has probed what isolation this machine allows
        if hello is None:
            self.close()
            raise RuntimeError(f"the sandbox zygote did not start (exit status {self.process.returncode})")
        facts = json.loads(hello)
        self.weaknesses = list(facts.get("weaknesses", []))
        breaches = list(facts.get("breaches", []))
        if breaches and not self.allow_weak:
            self.close()
            raise SandboxBreach("sandboxes could reach what they must not: " + "; ".join(breaches))
        self._ready = True
        return self.weaknesses

    def attach(self) -> socket.socket:
        """A line to this zygote for another process (a grading worker): wrap it in a ZygoteClient."""
        self.wait_ready()
        ours, theirs = socket.socketpair()
        try:
            socket.send_fds(self.sock, [ATTACH], [theirs.fileno()])
        finally:
            theirs.close()
        return ours

    def spawn(self) -> tuple[socket.socket, _Process]:
        """A new sandbox; a zygote that died is started again (one submission must never cost the
        next ones their sandboxes)."""
        try:
            self.wait_ready()
            return super().spawn()
        except (OSError, RuntimeError):
            self.close()
            self._start()
            self.wait_ready()
            return super().spawn()

    def close(self) -> None:
        super().close()
        wait_or_kill(self.process, 10)


class SandboxChannel:
    """A channel to one sandbox, replaced (code reloaded) after a crash or a timeout."""

    def __init__(self, zygote: ZygoteClient):
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
        from . import wire

        assert self.sock is not None
        deadline = time.monotonic() + seconds
        try:
            frames.send_frame(self.sock, request)
            while True:
                frame = frames.recv_frame(self.sock, deadline=deadline)
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
                frames.send_frame(self.sock, wire.encode(protocol.ok(on_callback(message))))
        except (socket.timeout, TimeoutError):
            return self._died(protocol.TIMEOUT, f"The call did not finish within {seconds:.3g} s (an infinite loop?); "
                                                "it was stopped.")
        except (OSError, wire.WireError, frames.FrameError) as exc:
            return self._died(protocol.CRASH, f"The submission's process broke the connection ({exc}).")

    def _died(self, kind: str, message: str) -> bytes:
        self.close()
        return _error(kind, message)

    def close(self) -> None:
        sock, self.sock = self.sock, None
        process, self.process = self.process, None
        if sock is not None:
            sock.close()
        if process is not None:
            process.kill()


def wait_or_kill(process: subprocess.Popen, seconds: float) -> None:
    """Give a process that was told to stop (its socket closed) `seconds` to end, then kill it."""
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _error(kind: str, message: str) -> bytes:
    from . import wire

    return wire.encode(protocol.error(kind, message))


def _zygote_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith(ENV_KEEP_PREFIXES)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written next to the package's modules
    return env
