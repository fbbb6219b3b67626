"""Running a submission's code in a separate, limited process.

A zygote process (a fresh interpreter that has imported torch and the runtime,
nothing else: never the reference or the graders) forks one sandbox per part
of a submission. Each sandbox hides the project's secret folders behind empty
mounts when the system allows it, drops root, limits CPU time, memory, file
size and processes, works in a scratch folder with an empty environment, and
answers requests over a socket in the plain-data wire format. The grading
process never unpickles anything from it and kills it when a call overruns.
"""

from __future__ import annotations

import ctypes
import os
import resource
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import wire

NOBODY = 65534
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 1, 2, 4, 16384, 1 << 18


@dataclass(frozen=True)
class Limits:
    """What one sandbox (one part of one submission) may use."""

    call_seconds: float = 60.0
    cpu_seconds: int = 300
    memory_bytes: int = 4 * 2**30  # on top of what the interpreter and torch already map
    file_bytes: int = 16 * 2**20
    processes: int = 256


def _send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack("<Q", len(data)) + data)


def _recv_exact(sock: socket.socket, size: int) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv_frame(sock: socket.socket, limit: int = wire.MAX_MESSAGE_BYTES + 4096) -> bytes | None:
    head = _recv_exact(sock, 8)
    if head is None:
        return None
    (size,) = struct.unpack("<Q", head)
    if size > limit:
        raise wire.WireError(f"a reply of {size} bytes is over the limit")
    return _recv_exact(sock, size)


class Zygote:
    """The process that forks sandboxes; one per grading process."""

    def __init__(self, limits: Limits, hidden: list[Path], public_files: list[Path]):
        self.limits = limits
        ours, theirs = socket.socketpair()
        config = wire.encode({"limits": [limits.cpu_seconds, limits.memory_bytes, limits.file_bytes, limits.processes],
                              "hidden": [str(p) for p in hidden], "public": [str(p) for p in public_files]})
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autograder.sandbox", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
        )
        self.process.stdin.write(config)
        self.process.stdin.close()
        theirs.close()
        self.sock = ours

    def spawn(self) -> tuple[socket.socket, int]:
        """A new sandbox: (socket to talk to it, its pid)."""
        ours, theirs = socket.socketpair()
        socket.send_fds(self.sock, [b"spawn"], [theirs.fileno()])
        theirs.close()
        reply = _recv_exact(self.sock, 8)
        if reply is None:
            raise RuntimeError("the sandbox zygote died")
        return ours, struct.unpack("<q", reply)[0]

    def close(self) -> None:
        self.sock.close()
        self.process.wait(timeout=10)


class SandboxChannel:
    """A channel to a sandbox that is replaced, code reloaded, after a crash or a timeout."""

    def __init__(self, zygote: Zygote):
        self.zygote = zygote
        self.sock: socket.socket | None = None
        self.pid = 0
        self.load_request: bytes | None = None

    def __call__(self, request: bytes) -> bytes:
        if self.sock is None:
            self.sock, self.pid = self.zygote.spawn()
            if self.load_request is not None and request is not self.load_request:
                self._exchange(self.load_request)  # a fresh sandbox needs the submission's code again
        if self.load_request is None:
            self.load_request = request
        return self._exchange(request)

    def _exchange(self, request: bytes) -> bytes:
        assert self.sock is not None
        try:
            _send_frame(self.sock, request)
            self.sock.settimeout(self.zygote.limits.call_seconds)
            reply = _recv_frame(self.sock)
            if reply is not None:
                return reply
            return self._died("crash", "The submission's process died during this call (a crash, os._exit, "
                                       "or the memory or CPU limit).")
        except (socket.timeout, TimeoutError):
            seconds = self.zygote.limits.call_seconds
            return self._died("timeout", f"The call did not finish within {seconds:g} s (an infinite loop?); it was stopped.")
        except (OSError, wire.WireError) as exc:
            return self._died("crash", f"The submission's process broke the connection ({exc}).")

    def _died(self, kind: str, message: str) -> bytes:
        self.close()
        return wire.encode({"ok": False, "error": {"kind": kind, "type": "", "message": message, "traceback": ""}})

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.pid:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.pid = 0


# ---- inside the zygote and the sandboxes ---------------------------------------------


def _zygote_main(fd: int) -> None:
    config = wire.decode(sys.stdin.buffer.read())
    import torch  # noqa: F401 - loaded once here, shared by every fork

    from . import runtime  # noqa: F401

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # sandboxes are reaped automatically
    control = socket.socket(fileno=fd)
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(control, 16, 1)
        except OSError:
            return
        if not fds:
            return
        pid = os.fork()
        if pid == 0:
            control.close()
            try:
                _sandbox_main(socket.socket(fileno=fds[0]), config)
            finally:
                os._exit(0)
        os.close(fds[0])
        control.sendall(struct.pack("<q", pid))


def _sandbox_main(sock: socket.socket, config: dict) -> None:
    import torch

    cpu, memory, file_size, processes = config["limits"]
    os.setsid()
    scratch = Path(tempfile.mkdtemp(prefix="submission-"))
    for public in config["public"]:
        shutil.copy(public, scratch)
    _hide(config["hidden"])
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, sock.fileno())
    os.closerange(sock.fileno() + 1, 65536)
    if os.geteuid() == 0 and _readable_by_others(Path(os.__file__).parent, Path(torch.__file__).parent):
        os.chown(scratch, NOBODY, NOBODY)
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "HOME": str(scratch), "OMP_NUM_THREADS": "1"})
    mapped = _mapped_bytes()  # torch already maps a lot of address space; the limit is on top
    for limit, value in ((resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, mapped + memory),
                         (resource.RLIMIT_FSIZE, file_size), (resource.RLIMIT_NPROC, processes),
                         (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # Only the standard library and installed packages stay importable; editable installs of
    # this project (the reference, the graders) are dropped along with the project folder.
    prefixes = (sys.prefix, sys.base_prefix)
    sys.path[:] = [str(scratch)] + [p for p in sys.path if p and p.startswith(prefixes)]
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
    from .runtime import Runtime, error_info

    runtime = Runtime()
    while True:
        request = _recv_frame(sock)
        if request is None:
            return
        try:
            reply = wire.encode(runtime.handle(wire.decode(request)))
        except BaseException as exc:  # noqa: BLE001 - whatever the submission did, answer
            reply = wire.encode({"ok": False, "error": error_info(exc)})
        _send_frame(sock, reply)


def _hide(paths: list[str]) -> None:
    """Mount an empty read-only tmpfs over each secret folder, in a mount namespace of our own."""
    libc = ctypes.CDLL(None, use_errno=True)
    if os.geteuid() != 0:
        uid, gid = os.getuid(), os.getgid()
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            return
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
    elif libc.unshare(CLONE_NEWNS) != 0:
        return
    libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None)
    for path in paths:
        if os.path.isdir(path):
            libc.mount(b"tmpfs", path.encode(), b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, b"size=4k")


def _readable_by_others(*folders: Path) -> bool:
    """Whether an unprivileged user could still import Python and torch (not so under a private /root)."""
    for folder in folders:
        for part in (folder, *folder.parents):
            if not part.stat().st_mode & 0o005:
                return False
    return True


def _mapped_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    _zygote_main(int(sys.argv[1]))
