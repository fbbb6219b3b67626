"""What runs in a sandbox once it is confined: the submission loaded once, and a process per part forked
from that loaded state.

A sandbox forked from the zygote confines itself, then answers requests on its socket. The first is
`load`: the submission's cells run once (a slow import is paid once). Then, for each part, and again
after a part's process timed out, crashed or ran out of memory, the grader sends `fork` with a fresh
socket: the sandbox forks a child that starts from the loaded state and answers that part's requests
on it (the names the grader serves for the part arrive in its first request, `serve`). `kill` ends a
child. The children share the sandbox's confinement (its PID namespace, cgroup, rlimits, seccomp
filter) and die with it; the grader, which holds the sandbox's pidfd, kills the whole of it when the
submission is done or the sandbox stops answering.

Code that started CUDA while loading leaves nothing a child could use (CUDA does not survive a fork):
then the load's reply says so, and the grader loads the submission afresh for each part instead.
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import sys
import time
from typing import Any

from . import confinement, frames, policy, protocol
from .limits import SandboxConfig

FORK_MARKER = b"F"  # the byte that carries a forked child's socket (SCM_RIGHTS) after a FORK frame


def serve(sock: socket.socket, config: SandboxConfig, host: confinement.Host, name: str) -> None:
    """Confine this process (the sandbox `name`), then answer requests until the grader closes the line."""
    import torch

    from . import wire
    from .server import Runtime, error_info, run_as_written

    confinement.confine(config, host, name, keep_fd=sock.fileno())
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.compile = run_as_written  # the code runs as written: see run_as_written
    fraction = config.limits.gpu_memory_fraction
    if fraction > 0:  # set when (if ever) CUDA starts in this sandbox: the zygote never starts it
        def limit_gpu_memory() -> None:
            for device in range(torch.cuda.device_count()):
                torch.cuda.set_per_process_memory_fraction(fraction, device)

        torch.cuda._lazy_call(limit_gpu_memory)
    exposed = config.view.expose
    sys.path[:] = [os.getcwd()] + [p for p in sys.path if p and any(policy.inside(p, e) for e in exposed)]
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
    line = _Line(sock)
    runtime = Runtime(line.call_back)
    children: set[int] = set()  # alive
    forked: dict[int, str] = {}  # every one it ever made -> how it ended ("" while alive)
    while True:
        request = frames.recv_frame(line.sock)
        if request is None:
            return
        _reap(children, forked)
        try:
            decoded = wire.decode(request)
            op = decoded.get("op") if type(decoded) is dict else None
            if op == protocol.FORK:
                if type(decoded.get("alone_with")) is list:  # the others the grader is done with: ended first
                    for other in [c for c in children if c not in decoded["alone_with"]]:
                        _kill(other, children, forked)
                child = _fork(line, children, forked)
                if child == 0:
                    confinement.recount_processes(config.limits.processes)
                    continue  # now the part's process, on its own socket: no reply to send
                reply = wire.encode(protocol.ok(child))
            elif op == protocol.KILL:
                reply = wire.encode(protocol.ok(_kill(decoded.get("target"), children, forked, decoded.get("grace"))))
            else:
                if type(decoded) is dict and decoded.get("measured") is True:  # for good: discarded after
                    confinement.reuse_freed_heap()  # a page is first touched once (isolation.held)
                result = runtime.handle(decoded)
                if op == protocol.LOAD:
                    result["forkable"] = not torch.cuda.is_initialized()
                    gc.freeze()  # the loaded state every part forks from: no collection copies its pages
                reply = wire.encode(result)
        except BaseException as exc:  # noqa: BLE001 - whatever the submission did, answer
            reply = wire.encode({"ok": False, "error": error_info(exc)})
        frames.send_frame(line.sock, b"R" + reply)


class _Line:
    """The socket this process answers on: a forked child takes a new one."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def call_back(self, message: dict) -> Any:
        from . import wire

        frames.send_frame(self.sock, b"C" + wire.encode(message))
        answer = frames.recv_frame(self.sock)
        if answer is None:
            raise RuntimeError("the grader went away")
        return wire.decode(answer)


def _fork(line: _Line, children: set[int], forked: dict[int, str]) -> int:
    """Fork a child that answers on the socket that came with the request; 0 in the child."""
    _, fds, _, _ = socket.recv_fds(line.sock, 1, 1)
    if not fds:
        raise RuntimeError("a fork request without a socket")
    gc.freeze()  # the child's collections never walk, and so never copy, what this process holds
    pid = os.fork()
    if pid == 0:
        confinement.die_with_parent()
        line.sock.close()
        line.sock = socket.socket(fileno=fds[0])
        children.clear()
        forked.clear()
        return 0
    os.close(fds[0])
    children.add(pid)
    forked[pid] = ""
    return pid


def _kill(target: Any, children: set[int], forked: dict[int, str], grace: Any = 0) -> str | bool:
    """End child `target` (only one of this process's own) and collect it; how it ended (a crash's exit
    status or signal, or "stopped"), False for a process it never made. `grace` (seconds): a child whose
    line to the grader already closed is on its way out; it is given that long to end by itself."""
    if type(target) is not int or target not in forked:
        return False
    if target in children:
        try:
            done, status = os.waitpid(target, os.WNOHANG)
            deadline = time.monotonic() + (min(float(grace), 1.0) if type(grace) in (int, float) else 0.0)
            while not done and time.monotonic() < deadline:
                time.sleep(0.002)
                done, status = os.waitpid(target, os.WNOHANG)
            if not done:
                os.kill(target, signal.SIGKILL)
                os.waitpid(target, 0)
                forked[target] = "stopped"
            else:
                forked[target] = _how(status)
        except (ProcessLookupError, ChildProcessError):
            forked[target] = forked[target] or "ended"
        children.discard(target)
    return forked[target] or "ended"


def _reap(children: set[int], forked: dict[int, str]) -> None:
    """Collect children that ended by themselves (a crash), so none lingers as a zombie."""
    for pid in list(children):
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
            how = _how(status) if done else ""
        except ChildProcessError:
            done, how = pid, "ended"
        if done:
            children.discard(pid)
            forked[pid] = how


def _how(status: int) -> str:
    """A wait status in words: `exit status 1`, `signal 11 (SIGSEGV)`."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            return f"signal {number} ({signal.Signals(number).name})"
        except ValueError:
            return f"signal {number}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
