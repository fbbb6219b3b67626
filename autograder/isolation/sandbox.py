"""The grader's side of the sandboxes: start a zygote, get sandboxes from it, talk to them.

A `Zygote` is the process that forks sandboxes (see `zygote.py` for what runs in it): one per run
on this machine, shared by its grading workers, each through a `ZygoteClient` of its own
(`Zygote.attach`). A submission's notebook is loaded once, in a sandbox of its own
(`LoadedSandbox`, see `inside.py`); each part is graded in a process forked from that loaded state.
A `SandboxChannel` is a channel (`proxy.Channel`) to one part: it sends requests, serves the
callbacks a request makes, enforces the request's deadline over the whole reply, and ends the
part's process when it overruns or dies; the next request gets a new one, forked from the loaded
state again (a slow import is paid once). If the loaded sandbox itself stops answering, it is
killed whole (through its pidfd) and the code loaded again within a short limit; if that fails too,
every later request fails at once.

This module imports nothing heavy at first, so that a worker can start its zygote before it loads
torch itself; the wire format (which needs torch) is imported when the first request is sent.
"""

from __future__ import annotations

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
from typing import Callable, Iterable, Protocol

from . import frames, protocol
from .deadline import Deadline, family, runnable
from .held import NOT_MEASURED, MemoryUse
from .limits import Limits, SandboxConfig
from .protocol import ATTACH, SPAWN, CallbackHandler, SandboxBreach

# What the zygote's environment keeps: what Python, torch and CUDA read; never AUTOGRADER_SECRET.
ENV_KEEP = ("PATH", "PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "LANG", "TZ", "TMPDIR")
ENV_KEEP_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "OMP_", "MKL_", "OPENBLAS_", "TORCH_", "PYTORCH_")
RELOAD_FLOOR_SECONDS = 2.0  # a reload after a crash may take this long, or 3 times the first load
CONTROL_SECONDS = 2.0  # a loaded sandbox's answer to fork or kill a part's process (it does nothing else)
PROBE_SECONDS = 60.0  # the probe sandbox's answer (it imports nothing: it is quick unless the machine is stuck)
SANDBOX_FRAME_BYTES = 64 * 2**20  # the most a sandbox may send at once: no grader check needs more
FROM_SANDBOX_REPLY, FROM_SANDBOX_CALLBACK = b"R", b"C"


@dataclass
class _Process:
    """A sandbox as the grader sees it: a pidfd (race-free, valid across PID namespaces) or, failing that, a pid."""

    pid: int
    pidfd: int | None

    def host_pid(self) -> int | None:
        """Its pid in the grader's PID namespace (the kernel's word, from the pidfd), None if unknown."""
        if self.pid > 0:
            return self.pid
        try:
            with open(f"/proc/self/fdinfo/{self.pidfd}") as info:
                return next(int(line.split()[1]) for line in info if line.startswith("Pid:")) or None
        except (OSError, ValueError, IndexError, StopIteration, TypeError):
            return None

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
    the submissions): the view is worked out here, around them, so the zygote (whose memory every
    sandbox inherits) is never told them. `public` are the helper files every sandbox finds in its
    scratch folder; `preload` the modules the zygote imports once for all. `wait_ready` probes a
    fresh sandbox and raises `SandboxBreach` when it could reach the reference, the graders or a
    secret, unless `allow_weak`."""

    def __init__(self, limits: Limits, secrets: Iterable[Path | str] = (), public: dict[str, bytes] | None = None,
                 preload: Iterable[str] = (), allow_weak: bool = False,
                 forked_by: Callable[[bytes, socket.socket], Stoppable] | None = None):
        from . import policy

        self.limits = limits
        self._forked_by = forked_by  # the first zygote: forked by this, given (configuration, its socket)
        self.allow_weak = allow_weak
        view = policy.sandbox_view(secrets)
        targets, modules = policy.probe_targets(secrets)
        self._probe_request = {"op": protocol.PROBE, "targets": targets, "modules": modules}
        preload = tuple(preload)
        self.config = json.dumps(SandboxConfig(limits, view, preload, dict(public or {}),
                                               matplotlib_font_list(preload)).to_json()).encode()
        self.weaknesses: list[str] = []
        self.isolation = ""  # what confines each sandbox, once the zygote has said (wait_ready)
        self._start()

    def _start(self) -> None:
        """Start the zygote; it imports and probes while the caller goes on (see `wait_ready`). The first
        may be forked for us (`forked_by`); one started again after it died is a fresh interpreter."""
        ours, theirs = socket.socketpair()
        forked_by, self._forked_by = self._forked_by, None
        try:
            self.process: Stoppable | None = forked_by(self.config, theirs) if forked_by is not None else None
        except OSError:  # whatever was to fork it is gone
            self.process = None
        if self.process is None:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "autograder.isolation.zygote", str(theirs.fileno())],
                pass_fds=[theirs.fileno()], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                env=zygote_environment(), cwd="/",
            )
            assert self.process.stdin is not None  # stdin=PIPE
            self.process.stdin.write(self.config)
            self.process.stdin.close()
        theirs.close()
        super().__init__(ours)
        self._ready = False

    def wait_ready(self) -> list[str]:
        """Wait for the zygote's first message, then probe a fresh sandbox; returns what is weaker than
        full isolation. Raises SandboxBreach when the sandbox could reach what it must not (unless
        `allow_weak`). Only this probe decides: no submission code has run in that sandbox."""
        if self._ready:
            return self.weaknesses
        try:
            hello = frames.recv_frame(self.sock)  # once it has found out what isolation this machine allows
        except OSError:  # it ended with our messages unread: the line was reset
            hello = None
        if hello is None:
            self.close()
            raise RuntimeError("the process that starts the sandboxes ended before it was ready (what stopped it, "
                               "if anything, is printed above)")
        facts = json.loads(hello)
        self.weaknesses = list(facts.get("weaknesses", []))
        self.isolation = str(facts.get("isolation", ""))
        breaches = self._probe()
        if breaches and not self.allow_weak:
            self.close()
            raise SandboxBreach("sandboxes could reach what they must not: " + "; ".join(breaches))
        self._ready = True
        return self.weaknesses

    def _probe(self) -> list[str]:
        """What a fresh sandbox can reach of the probe targets."""
        from . import wire

        sock, process = super().spawn()
        try:
            frames.send_frame(sock, wire.encode(self._probe_request))
            frame = frames.recv_frame(sock, deadline=time.monotonic() + PROBE_SECONDS)
            reply = wire.decode(frame[1:]) if frame else None
        except (OSError, TimeoutError, wire.WireError, frames.FrameError):
            reply = None
        finally:
            sock.close()
            process.kill()
        if type(reply) is not dict or reply.get("ok") is not True or type(reply.get("value")) is not list:
            return ["the probe sandbox did not answer"]
        return [str(found) for found in reply["value"]]

    def attach(self) -> socket.socket:
        """A line to this zygote for another process (a grading worker): wrap it in a ZygoteClient. It may be
        had before `wait_ready`: the zygote reads it only once it serves, and the owner sends that process
        no submission before its probe found that sandboxes hold."""
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
        assert self.process is not None  # `_start` set it
        wait_or_kill(self.process, 10)


_FORGED = "The submission's process sent the grader what it never asked for (did it write to the grader's socket?)"


CRASH_GRACE_SECONDS = 0.5  # how long a part whose line closed may take to end by itself (its exit status is told)


class _Lost(Exception):
    """A process did not answer as it should: `kind` and `message` are what the submission is told."""

    def __init__(self, kind: str, message: str, detail: str = ""):
        super().__init__(message)
        self.kind, self.message, self.detail = kind, message, detail

    def reply(self) -> bytes:
        return _error(self.kind, self.message, self.detail)


def _exchange(sock: socket.socket, request: bytes, deadline: Deadline, on_callback: CallbackHandler) -> bytes:
    """Send `request`, serve its callbacks, return the reply's bytes by `deadline`; raises _Lost."""
    from . import wire

    seconds = deadline.seconds
    try:
        sock.settimeout(max(0.001, deadline() - time.monotonic()))  # sending waits by this call's deadline too,
        frames.send_frame(sock, request)  # not by what an earlier, shorter exchange left on the socket
        while True:
            frame = frames.recv_frame(sock, SANDBOX_FRAME_BYTES, deadline=deadline)
            if frame is None:
                raise _Lost(protocol.CRASH, "The submission's process died during this call (a crash, os._exit, "
                                            "or the memory or CPU limit).")
            kind, body = frame[:1], frame[1:]
            if kind == FROM_SANDBOX_REPLY:
                return body
            if time.monotonic() >= deadline():  # past it, only a reply already there is taken: a stream of
                raise TimeoutError  # callbacks queued by a thread of its own never keeps the call going
            if kind != FROM_SANDBOX_CALLBACK:
                raise _Lost(protocol.PROTOCOL, _FORGED + " (a frame of no known kind).")
            try:
                message = wire.decode(body)
            except wire.WireError:
                message = None
            if type(message) is not dict or message.get("op") != protocol.CALLBACK:
                raise _Lost(protocol.PROTOCOL, _FORGED + " (a malformed callback).")
            frames.send_frame(sock, wire.encode(on_callback(message)))  # a reply: it never raises
    except (socket.timeout, TimeoutError):
        waited = deadline.waited()
        busy = f", and waited {waited:.2g} s more for a busy machine's CPU" if waited >= 0.05 else ""
        raise _Lost(protocol.TIMEOUT, f"The call did not finish within {seconds:.3g} s{busy} (an infinite loop?); "
                                      "it was stopped.") from None
    except (OSError, wire.WireError, frames.FrameError) as exc:
        raise _Lost(protocol.CRASH, f"The submission's process broke the connection ({exc}).") from None


class LoadedSandbox:
    """One notebook of one submission, loaded once in a sandbox from the zygote; every part of it runs
    in a process this sandbox forks (`fork`). Code that started CUDA while loading (a forked child
    could not use it) gets, instead, a sandbox of its own loaded afresh for each part."""

    def __init__(self, zygote: ZygoteClient, load_request: bytes, serving: "Serving | None" = None):
        self.zygote, self.load_request, self.serving = zygote, load_request, serving
        self.sock: socket.socket | None = None
        self.process: _Process | None = None
        self.reply: bytes | None = None  # the load's reply: every part is given the same
        self.load_seconds = 0.0
        self.busy_seconds = 0.0  # how much later than their limits its loads ended, for a busy machine (Deadline)
        self.forkable = False

    def load(self, seconds: float, on_callback: CallbackHandler) -> bytes:
        """The reply to loading the submission; its cells run the first time only."""
        if self.reply is None:
            start = time.monotonic()
            try:
                self.reply = self._start(seconds, on_callback)
            except _Lost as lost:
                self.close()
                self.reply = lost.reply()
            self.load_seconds = time.monotonic() - start
        return self.reply

    def _start(self, seconds: float, on_callback: CallbackHandler) -> bytes:
        from . import wire

        self.sock, self.process = self.zygote.spawn()
        deadline = Deadline(seconds, self.process.host_pid(), serving=_clock(self.serving))
        try:
            reply = _exchange(self.sock, self.load_request, deadline, on_callback)
        finally:
            self.busy_seconds += deadline.overrun()
        decoded = wire.decode(reply)
        self.forkable = type(decoded) is dict and decoded.get("forkable") is True
        return reply

    def fork(self, seconds: float, on_callback: CallbackHandler,
             alone_with: list[int] | None = None) -> tuple[socket.socket, "_Part"]:
        """A new process for a part, in the loaded state; raises _Lost when none can be had. With `alone_with`
        (pids in the sandbox), every other process the loaded one forked is ended and collected first: a
        measured call's process starts among no other part's (isolation.held)."""
        if self.reply is None:
            raise _Lost(protocol.CRASH, "The submission was not loaded.")
        if not self.forkable:  # its own sandbox, loaded afresh
            sock, process = self.zygote.spawn()
            deadline = Deadline(self._reload_limit(seconds), process.host_pid(), serving=_clock(self.serving))
            try:
                _exchange(sock, self.load_request, deadline, on_callback)
            except _Lost:
                sock.close()
                process.kill()
                raise
            finally:
                self.busy_seconds += deadline.overrun()
            return sock, _Part(process=process, host_pid=deadline.pid, sandbox_pid=deadline.pid)
        for attempt in (1, 2):
            if self.sock is None:  # the loaded sandbox was lost: load the code again, within a short limit
                try:
                    self._start(self._reload_limit(seconds), on_callback)
                except _Lost:
                    self.close()
                    told = ("After a crash or a timeout, your code could not be loaded again within "
                            f"{self._reload_limit(seconds):.3g} s, so nothing more of it runs.")
                    raise _Lost(protocol.CRASH, told) from None
            try:
                return self._fork_child(alone_with)
            except _Lost:
                self.close()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _fork_child(self, alone_with: list[int] | None = None) -> tuple[socket.socket, "_Part"]:
        assert self.sock is not None
        sandbox = self._host_pid()
        ours, pid = fork_from(self.sock, sandbox, alone_with)
        return ours, _Part(loaded=self, pid=pid, host_pid=_child_pid(sandbox, pid), forked_by=self.process,
                           sandbox_pid=sandbox)

    def _host_pid(self) -> int | None:
        return self.process.host_pid() if self.process is not None else None

    def kill(self, pid: int, forked_by: _Process | None, crashed: bool = False) -> str:
        """End a part's process and say how it ended ("exit status 1", "signal 11 (SIGSEGV)": the loaded
        sandbox's word, which labels only its own crash); one that will not answer promptly is killed whole.
        A part whose line `crashed` (closed) is given a moment to end by itself, so its exit is what is told.
        A part forked by an earlier sandbox (since lost) died with it: its pid, in the sandbox loaded since,
        may be another part's."""
        from . import wire

        if self.sock is None or forked_by is not self.process:
            return ""
        try:
            frames.send_frame(self.sock, wire.encode({"op": protocol.KILL, "target": pid,
                                                      "grace": CRASH_GRACE_SECONDS if crashed else 0}))
            reply = wire.decode(_exchange_reply(self.sock, CONTROL_SECONDS, self._host_pid()))
            if type(reply) is dict and reply.get("ok") is True and type(reply.get("value")) is str:
                return reply["value"][:40]
        except (OSError, wire.WireError, frames.FrameError, TimeoutError, _Lost):
            pass
        self.close()
        return ""

    def _reload_limit(self, seconds: float) -> float:
        return min(seconds, max(RELOAD_FLOOR_SECONDS, 3 * self.load_seconds))

    def close(self) -> None:
        """Kill the sandbox and every process it forked."""
        sock, self.sock = self.sock, None
        process, self.process = self.process, None
        if sock is not None:
            sock.close()
        if process is not None:
            process.kill()


def fork_from(sock: socket.socket, pid: int | None, alone_with: list[int] | None = None) -> tuple[socket.socket, int]:
    """Have the sandbox process on `sock` (process `pid` here) fork a child in its state, which answers on a
    socket of its own: (that socket, the child's pid in the sandbox's namespace); raises _Lost."""
    from . import wire

    ours, theirs = socket.socketpair()
    request = {"op": protocol.FORK} if alone_with is None else {"op": protocol.FORK, "alone_with": alone_with}
    try:
        frames.send_frame(sock, wire.encode(request))
        socket.send_fds(sock, [inside_marker()], [theirs.fileno()])
        reply = wire.decode(_exchange_reply(sock, CONTROL_SECONDS, pid))
    except (OSError, wire.WireError, frames.FrameError, TimeoutError, _Lost):
        ours.close()
        raise _Lost(protocol.CRASH, "The submission's loaded process did not fork a part.") from None
    finally:
        theirs.close()
    if type(reply) is not dict or reply.get("ok") is not True or type(reply.get("value")) is not int:
        ours.close()
        raise _Lost(protocol.CRASH, "The submission's loaded process did not fork a part.")
    return ours, reply["value"]


def _exchange_reply(sock: socket.socket, seconds: float, pid: int | None) -> bytes:
    """The next reply frame from a loaded sandbox, process `pid` (its control requests make no callbacks)."""
    frame = frames.recv_frame(sock, SANDBOX_FRAME_BYTES, deadline=Deadline(seconds, pid))
    if frame is None or frame[:1] != FROM_SANDBOX_REPLY:
        raise _Lost(protocol.CRASH, "the loaded process did not answer")
    return frame[1:]


SETTLE_SECONDS = 1.0  # how long the processes of a sandbox may take to go idle before a measured call


def _settle(sandbox: int | None, call: int | None) -> None:
    """Wait, briefly, until no process of the sandbox but the call's runs: the one that just forked it is
    still on its way back to waiting for the grader (isolation.held counts a process that runs)."""
    if sandbox is None:
        return
    end = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < end:
        members = family(sandbox) or []
        if not any(runnable(pid) for pid in members if pid != call):
            return
        time.sleep(0.001)


def inside_marker() -> bytes:
    from .inside import FORK_MARKER

    return FORK_MARKER


def _child_pid(parent: int | None, inner: int) -> int | None:
    """The pid here of the child of `parent` whose pid in the sandbox's namespace is `inner`, None if there
    is none. The kernel says which children it has and their pids; the sandbox only says `inner`, so at
    worst it names another child of its own."""
    if parent is None:
        return None
    try:
        with open(f"/proc/{parent}/task/{parent}/children") as listing:
            children = listing.read().split()
    except OSError:
        return None
    for child in children:
        try:
            with open(f"/proc/{child}/status") as status:
                nspids = next(line.split()[1:] for line in status if line.startswith("NSpid:"))
        except (OSError, StopIteration):
            continue
        if nspids and nspids[-1] == str(inner):
            return int(child)
    return None


@dataclass
class _Part:
    """A part's process: a child of the loaded sandbox, or a sandbox of its own; `host_pid` is its pid in
    the grader's namespace, for its deadlines (None if unknown)."""

    loaded: LoadedSandbox | None = None
    pid: int = 0  # in the namespace of the loaded sandbox that forked it, `forked_by`
    process: _Process | None = None
    host_pid: int | None = None
    forked_by: _Process | None = None
    sandbox_pid: int | None = None  # the first process of its sandbox, in the grader's namespace (Deadline)

    def orphaned(self) -> bool:
        """Forked by a loaded sandbox that the grader has ended since (it was late to answer a request to fork
        or kill another part, which a busy machine can make it): this process died with it."""
        return self.loaded is not None and self.forked_by is not self.loaded.process

    def end(self, kill: bool, crashed: bool = False) -> str:
        """Ended: killed (it overran or broke; returns how it had ended, where known), or left to exit by
        itself (its socket is closed)."""
        if self.process is not None:
            self.process.kill()
        elif self.loaded is not None and kill:
            return self.loaded.kill(self.pid, self.forked_by, crashed)
        return ""


class Serving(Protocol):
    """The grader's side of a submission's calls while they run: its own work for them is theirs."""

    def cpu_seconds(self) -> float:
        """The CPU seconds the grader has spent serving them, as a clock."""

    def fresh_pids(self) -> list[int]:
        """The grader's processes that compute for them, started afresh (isolation.held)."""


def _clock(serving: Serving | None) -> Callable[[], float] | None:
    return serving.cpu_seconds if serving is not None else None


class Loads:
    """A submission's loaded sandboxes, one per notebook (per load request), shared by its parts and
    ended with it."""

    def __init__(self, zygote: ZygoteClient, serving: "Serving | None" = None):
        self.zygote = zygote
        self.serving = serving
        self._loaded: dict[bytes, LoadedSandbox] = {}
        self.parts_busy_seconds = 0.0  # what its parts' channels add (SandboxChannel)
        self._closed_busy_seconds = 0.0  # what its loads added, once they are closed

    @property
    def busy_seconds(self) -> float:
        """How much later than their limits the submission's requests ended, for a busy machine (Deadline)."""
        return self.parts_busy_seconds + self._closed_busy_seconds + sum(s.busy_seconds for s in self._loaded.values())

    def get(self, load_request: bytes) -> LoadedSandbox:
        if load_request not in self._loaded:
            self._loaded[load_request] = LoadedSandbox(self.zygote, load_request, self.serving)
        return self._loaded[load_request]

    def close(self) -> None:
        for loaded in self._loaded.values():
            loaded.close()
            self._closed_busy_seconds += loaded.busy_seconds
        self._loaded.clear()


class SandboxChannel:
    """A channel to one part of a submission: its process is forked from the loaded submission, and
    forked again after a crash or a timeout (the names it is served sent again)."""

    def __init__(self, loads: Loads):
        self.loads = loads
        self.loaded: LoadedSandbox | None = None
        self.serve_request: bytes | None = None
        self.sock: socket.socket | None = None
        self.part: _Part | None = None
        self.last_work_seconds: float | None = None  # the work the last request caused, by the kernel's count
        self.last_held: int | str | None = None  # the bytes the last measured request held at once, or why unknown

    def __call__(self, request: bytes, seconds: float, on_callback: CallbackHandler,
                 warmup: bytes | None = None) -> bytes:
        from . import wire

        op = wire.op_of(request)
        self.last_work_seconds = self.last_held = None
        if op == protocol.LOAD:
            self.loaded = self.loads.get(request)
            return self.loaded.load(seconds, on_callback)
        if op == protocol.SERVE:
            self.serve_request = request
        if warmup is not None:
            return self._measured(warmup, request, seconds, on_callback)
        try:
            if self.part is not None and self.part.orphaned():
                self.close()  # it died with a loaded sandbox the grader ended: a new one, charged to no one
            if self.sock is None:
                reply = self._open(seconds, on_callback)
                if op == protocol.SERVE:
                    return reply
            assert self.sock is not None
            return self._exchange(self.sock, request, seconds, on_callback)
        except _Lost as lost:
            how = self.close(kill=True, crashed=lost.kind == protocol.CRASH)
            if lost.kind == protocol.CRASH and how and how not in ("stopped", "ended"):
                lost = _Lost(lost.kind, f"{lost.message.rstrip('.')}: {how}.", detail=how)
            return lost.reply()

    def _open(self, seconds: float, on_callback: CallbackHandler, alone_with: list[int] | None = None) -> bytes:
        """A new process for this part, sent the names it is served; the SERVE reply."""
        if self.loaded is None or self.serve_request is None:
            raise _Lost(protocol.CRASH, "The submission was not loaded.")
        self.sock, self.part = self.loaded.fork(seconds, on_callback, alone_with)
        return self._exchange(self.sock, self.serve_request, min(seconds, RELOAD_FLOOR_SECONDS), on_callback)

    def _exchange(self, sock: socket.socket, request: bytes, seconds: float, on_callback: CallbackHandler) -> bytes:
        """`_exchange` with this part's process, counting what a busy machine added to its deadline."""
        part = self.part
        deadline = Deadline(seconds, part.host_pid if part is not None else None,
                            part.sandbox_pid if part is not None else None, _clock(self.loads.serving))
        try:
            return _exchange(sock, request, deadline, on_callback)
        finally:
            self.loads.parts_busy_seconds += deadline.overrun()
            self.last_work_seconds = deadline.work_done()

    def _measured(self, warmup: bytes, request: bytes, seconds: float, on_callback: CallbackHandler) -> bytes:
        """`request` in a process of its own, and the memory it used (`last_held`: isolation.held). `warmup`
        runs first in a process forked for it from the loaded submission, alone beside this part's (any other
        the grader closed has ended); the call runs in a child of that one, forked after the warm-up, so that
        whatever the code kept from import or from the warm-up is memory it inherits: shared until written.
        Both are ended afterwards; this part's process stays as it is."""
        warm = SandboxChannel(self.loads)
        warm.loaded, warm.serve_request = self.loaded, self.serve_request
        call = SandboxChannel(self.loads)
        self.last_held = f"{NOT_MEASURED}: the call did not run"
        try:
            warm._open(seconds, on_callback, alone_with=[self.part.pid] if self.part is not None else [])
            assert warm.sock is not None and warm.part is not None
            warm._exchange(warm.sock, warmup, seconds, on_callback)
            call.sock, inner = fork_from(warm.sock, warm.part.host_pid)
            call.part = _Part(pid=inner, host_pid=_child_pid(warm.part.host_pid, inner),
                              sandbox_pid=warm.part.sandbox_pid)
            _settle(warm.part.sandbox_pid, call.part.host_pid)
            helpers = self.loads.serving.fresh_pids() if self.loads.serving is not None else []
            use = MemoryUse(call.part.sandbox_pid, call.part.host_pid, helpers)
            reply = call._exchange(call.sock, request, seconds, on_callback)
            self.last_held = use.bytes()
            return reply
        except _Lost as lost:
            return lost.reply()
        finally:
            self.last_work_seconds = call.last_work_seconds
            call.close()
            warm.close(kill=True)  # the call's process dies with it

    def close(self, kill: bool = False, crashed: bool = False) -> str:
        """End this part's process: an idle one exits when its socket closes; `kill` for one that may not
        (then how it had ended, where known; `crashed`: its line closed first)."""
        sock, self.sock = self.sock, None
        part, self.part = self.part, None
        if sock is not None:
            sock.close()
        return part.end(kill, crashed) if part is not None else ""


FONT_LIST_BYTES = 2**20  # matplotlib's font list of a machine with many fonts is tens of kilobytes


def matplotlib_font_list(preload: Iterable[str]) -> dict[str, bytes]:
    """The font list matplotlib keeps in this user's cache (read, never written), by file name, when the
    zygote is to import matplotlib: in its own, private matplotlib folder it saves the zygote scanning
    the system's fonts again (before the first sandbox of every run). matplotlib
    checks the list's version itself, and builds its own where none is given."""
    if not any(module.split(".")[0] == "matplotlib" for module in preload):
        return {}
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")  # as is where there is no home
    folder = Path(os.environ.get("MPLCONFIGDIR") or os.path.join(cache, "matplotlib"))
    found = {}
    for path in folder.glob("fontlist-v*.json"):
        try:
            if path.is_file() and not path.is_symlink() and path.stat().st_size <= FONT_LIST_BYTES:
                found[path.name] = path.read_bytes()
        except OSError:
            continue
    return found


class Stoppable(Protocol):
    """A process this one started and may stop: a subprocess.Popen, or one the workers' parent forked
    (pool.parent.ForkedProcess, or the zygote it is still forking)."""

    def wait(self, timeout: float | None = None) -> object:
        """Wait for it to end; subprocess.TimeoutExpired after `timeout` seconds."""

    def kill(self) -> None:
        """End it now."""


def wait_or_kill(process: Stoppable, seconds: float) -> None:
    """Give a process that was told to stop (its socket closed) `seconds` to end, then kill it."""
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _error(kind: str, message: str, detail: str = "") -> bytes:
    from . import wire

    reply = protocol.error(kind, message)
    if detail:
        reply["error"]["detail"] = detail
    return wire.encode(reply)


def zygote_environment() -> dict[str, str]:
    """What a zygote (and the workers' parent that may fork it) is started with: never the secret."""
    env = {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith(ENV_KEEP_PREFIXES)}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # nothing written next to the package's modules
    return env
