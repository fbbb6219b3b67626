"""Running a submission's code in a separate, limited process.

A zygote process (a fresh interpreter that has imported torch and the runtime,
nothing else: never the reference or the graders) forks one sandbox per part
of a submission. The zygote is started with none of the grader's secrets in its
environment (a fork can read its parent's environment from its own memory),
and it is pid 1 of a PID namespace of its own, so every sandbox dies with it.

Each sandbox gets, where the system allows (see `_isolate`):

- its own PID namespace: it sees and can signal its own processes only (not
  the grader, not other sandboxes), and all of them die when it is killed;
- its own mount namespace: the project folder, the folder the grader runs in,
  the grader's home and the secret folders hidden behind empty mounts (only
  Python and its packages are bound back where they lie beneath), everything
  else read-only, a private size-limited /tmp (its scratch folder), /dev/shm
  and /var/tmp, and a /proc of its own;
- its own network and IPC namespaces: no network, and no way to pass
  anything to another sandbox (another part of the same submission);
- an unprivileged identity: under root a uid of its own with no capabilities
  (Python is kept readable even when it lives in a private home such as
  /root); otherwise a user namespace with every capability dropped; and
  no_new_privs, so no set-uid program gives anything back;
- limits on CPU time, memory, file size and processes (under root counted
  per sandbox, through its own uid; otherwise per grading process, through
  the zygote's user namespace), an empty environment, and a per-call timeout
  enforced by the grader over the whole reply.

It answers requests over a socket in the plain-data wire format. The grading
process never unpickles anything from it and kills it (through a pidfd) when a
call overruns. Where the system refuses namespaces (a normal user without
user namespaces), grading still works with weaker isolation, and the grader
says so once on stderr.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from . import wire

SANDBOX_UID_BASE = 1 << 30  # + the sandbox's pid: a uid no one else has, so process limits count per sandbox
SCRATCH = "/tmp/submission"
PRIVATE_TMP = ("/tmp", "/var/tmp", "/dev/shm")
SYSTEM_FOLDERS = ("/bin", "/dev", "/etc", "/lib", "/lib64", "/proc", "/sbin", "/sys", "/usr")
# What the zygote's environment keeps: what Python, torch and CUDA read; never AUTOGRADER_SECRET.
ENV_KEEP = ("PATH", "PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "LANG", "TZ", "TMPDIR")
ENV_KEEP_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "OMP_", "MKL_", "OPENBLAS_", "TORCH_", "PYTORCH_")

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x8000000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, SYS_MOUNT_SETATTR = -100, 0x8000, 1, 2, 442
PR_SET_NO_NEW_PRIVS, CAPABILITY_VERSION_3 = 38, 0x20080522

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Limits:
    """What one sandbox (one part of one submission) may use."""

    call_seconds: float = 60.0
    cpu_seconds: int = 300
    memory_bytes: int = 4 * 2**30  # on top of what the interpreter and torch already map
    file_bytes: int = 16 * 2**20
    processes: int = 256
    scratch_bytes: int = 64 * 2**20  # all files together in the private /tmp (it is memory)


def _send_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(struct.pack("<Q", len(data)) + data)


def _recv_exact(sock: socket.socket, size: int, deadline: float | None = None) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("deadline passed")
            sock.settimeout(left)  # the whole frame shares one deadline: trickling bytes buys no time
        chunk = sock.recv(min(size - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _recv_frame(sock: socket.socket, limit: int = wire.MAX_MESSAGE_BYTES + 4096, deadline: float | None = None) -> bytes | None:
    head = _recv_exact(sock, 8, deadline)
    if head is None:
        return None
    (size,) = struct.unpack("<Q", head)
    if size > limit:
        raise wire.WireError(f"a reply of {size} bytes is over the limit")
    return _recv_exact(sock, size, deadline)


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
    """The process that forks sandboxes; one per grading process."""

    def __init__(self, limits: Limits, hidden: list[Path], public_files: list[Path]):
        self.limits = limits
        self.config = wire.encode({
            "limits": [limits.cpu_seconds, limits.memory_bytes, limits.file_bytes, limits.processes, limits.scratch_bytes],
            "hidden": [str(p) for p in hidden], "public": [str(p) for p in public_files], "home": str(Path.home()),
        })
        self._start()

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autograder.sandbox", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=_zygote_environment(),
        )
        self.process.stdin.write(self.config)
        self.process.stdin.close()
        theirs.close()
        self.sock = ours
        hello = _recv_frame(ours)  # once it has probed what isolation this machine allows
        self.weaknesses: list[str] = list(wire.decode(hello).get("weaknesses", [])) if hello else ["no zygote"]
        _warn_once(self.weaknesses)  # here, not in spawn(): graders run under pytest, which captures stderr

    def spawn(self) -> tuple[socket.socket, _Process]:
        """A new sandbox: (socket to talk to it, the process to kill). Restarts a zygote that died."""
        try:
            return self._spawn()
        except (OSError, RuntimeError):
            self.close()
            self._start()  # one submission must never cost the next ones their sandboxes
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
    """A channel to a sandbox that is replaced, code reloaded, after a crash or a timeout."""

    def __init__(self, zygote: Zygote):
        self.zygote = zygote
        self.sock: socket.socket | None = None
        self.process: _Process | None = None
        self.load_request: bytes | None = None

    def __call__(self, request: bytes) -> bytes:
        if self.sock is None:
            self.sock, self.process = self.zygote.spawn()
            if self.load_request is not None and request is not self.load_request:
                reply = self._exchange(self.load_request)  # a fresh sandbox needs the submission's code again
                if self.sock is None:
                    return reply  # it did not survive its own reload: say why
        if self.load_request is None:
            self.load_request = request
        return self._exchange(request)

    def _exchange(self, request: bytes) -> bytes:
        assert self.sock is not None
        seconds = self.zygote.limits.call_seconds
        deadline = time.monotonic() + seconds
        try:
            self.sock.settimeout(seconds)
            _send_frame(self.sock, request)
            reply = _recv_frame(self.sock, deadline=deadline)
            if reply is not None:
                return reply
            return self._died("crash", "The submission's process died during this call (a crash, os._exit, "
                                       "or the memory or CPU limit).")
        except (socket.timeout, TimeoutError):
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
        if self.process is not None:
            self.process.kill()
            self.process = None


def _zygote_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k in ENV_KEEP or k.startswith(ENV_KEEP_PREFIXES)}


def _warn_once(weaknesses: list[str]) -> None:
    """One line on stderr per grading run (not per worker): the workers of a run share a process group,
    and the first to claim a name in the abstract socket namespace speaks."""
    if not weaknesses:
        return
    claim = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        claim.bind(f"\0autograder-sandbox-warning-{os.getpgrp()}")
    except OSError:
        claim.close()
        return
    _warn_once.claim = claim  # type: ignore[attr-defined]  # held for the life of this process
    print(f"autograder: weaker sandbox on this machine: {'; '.join(weaknesses)}. Run as root, or allow unprivileged "
          "user namespaces, for full isolation.", file=sys.stderr)


# ---- inside the zygote and the sandboxes ---------------------------------------------


def _zygote_main(fd: int) -> None:
    config = wire.decode(sys.stdin.buffer.read())
    config["real_root"] = os.geteuid() == 0
    mode = _enter_namespaces(fd)
    config["mode"] = mode
    config["keep"], config["overlay"], config["probe_files"] = _visible_folders(mode, config["home"])
    control = socket.socket(fileno=fd)
    own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if mode else -1
    config["scratch_root"] = tempfile.mkdtemp(prefix="autograder-")  # used only where /tmp cannot be private
    os.chmod(config["scratch_root"], 0o711)
    try:
        config["drop_root"], weaknesses = _probe(config, own_pid_ns)
        _send_frame(control, wire.encode({"weaknesses": weaknesses}))
        _serve(control, config, own_pid_ns)
    finally:
        shutil.rmtree(config["scratch_root"], ignore_errors=True)


def _serve(control: socket.socket, config: dict, own_pid_ns: int) -> None:
    """Fork a sandbox for every request, until the grader goes away."""
    import torch  # noqa: F401 - loaded once here, shared by every fork

    from . import runtime  # noqa: F401

    mode = config["mode"]
    while True:
        try:
            _, fds, _, _ = socket.recv_fds(control, 16, 1)
        except OSError:
            return
        if not fds:
            return
        try:
            pid = _fork(mode, own_pid_ns)
        except OSError:
            os.close(fds[0])
            socket.send_fds(control, [struct.pack("<q", -1)], [])
            continue
        if pid == 0:
            control.close()
            try:
                _sandbox_main(socket.socket(fileno=fds[0]), config)
            finally:
                os._exit(0)
        os.close(fds[0])
        pidfd = os.pidfd_open(pid)  # before any reaping, so the pid cannot have been reused
        socket.send_fds(control, [struct.pack("<q", 0 if mode else pid)], [pidfd])
        os.close(pidfd)
        _reap()


def _enter_namespaces(control_fd: int) -> str:
    """Make the zygote pid 1 of a PID namespace of its own (inside a user namespace of its own when
    not root), so that it may give each sandbox a fresh PID namespace, and all die with it.

    Returns "root" or "user" for the kind of privilege the zygote now has over its sandboxes,
    or "" when the system allows no namespaces (then nothing changed).
    """
    mode = "root" if os.geteuid() == 0 else "user"
    trial = os.fork()  # a throwaway child tries first: a user namespace cannot be left again
    if trial == 0:
        os._exit(0 if _unshare_zygote(mode) else 1)
    if os.waitstatus_to_exitcode(os.waitpid(trial, 0)[1]) != 0 or not _unshare_zygote(mode):
        return ""
    child = os.fork()
    if child:  # stays outside, only to wait: the grader sees its exit status
        os.close(control_fd)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _, status = os.waitpid(child, 0)
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    return mode


def _unshare_zygote(mode: str) -> bool:
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(CLONE_NEWPID | (CLONE_NEWUSER if mode == "user" else 0)) != 0:
        return False
    if mode == "user":
        try:
            Path("/proc/self/setgroups").write_text("deny")
            Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
            Path("/proc/self/gid_map").write_text(f"0 {gid} 1")
        except OSError:
            return False
    return True


def _fork(mode: str, own_pid_ns: int) -> int:
    """os.fork(), the child being pid 1 of a new PID namespace when the system allows."""
    if not mode or _libc.unshare(CLONE_NEWPID) != 0:
        return os.fork()
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid != 0 and _libc.setns(own_pid_ns, CLONE_NEWPID) != 0:  # the next sandbox gets a new namespace again
        raise OSError(ctypes.get_errno(), "setns")
    if pid < 0:
        raise OSError("fork failed")
    return pid


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _probe(config: dict, own_pid_ns: int) -> tuple[bool, list[str]]:
    """Set up one throwaway sandbox and see what held.

    Returns whether sandboxes can drop root (the interpreter is still readable by another uid)
    and what is weaker than full isolation, in words for the instructor.
    """
    read, write = os.pipe()
    pid = _fork(config["mode"], own_pid_ns)
    if pid == 0:
        try:
            os.close(read)
            weaknesses = _isolate(config, drop_root=config["real_root"], keep_fd=write)
            readable = os.geteuid() != 0 and all(os.access(f, os.R_OK) for f in config["probe_files"])
            if os.path.exists("/dev/nvidiactl") and not os.access("/dev/nvidiactl", os.R_OK | os.W_OK):
                weaknesses.append("sandboxes cannot open the GPU (/dev/nvidiactl), so CUDA checks will fail")
            os.write(write, json.dumps({"weaknesses": weaknesses, "readable": readable}).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    try:
        result = json.loads(data)
    except ValueError:
        return False, ["the sandbox could not set itself up"]
    weaknesses = result["weaknesses"]
    if not config["mode"]:
        weaknesses.insert(0, "no namespaces (submissions can read the graders and signal your processes)")
    drop_root = config["real_root"] and result["readable"]
    if config["real_root"] and not drop_root and not any("uid of their own" in w for w in weaknesses):
        weaknesses.append("Python is not readable by other users, so sandboxes run as root without capabilities")
    return drop_root, weaknesses


def _visible_folders(mode: str, home: str) -> tuple[list[str], list[str], list[str]]:
    """(folders a sandbox must still read: Python, its packages, torch;
    folders to cover with an empty mount: the project, the grader's folder, the grader's home (whatever
    a sandbox reads could reach a student through the feedback) and, under root, private folders
    above Python such as /root that another uid could not enter;
    files that show whether a sandbox can still read Python and torch)."""
    import importlib.util

    keep = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    probe_files = [os.__file__]
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.origin:
        keep.add(str(Path(spec.origin).parent.parent))
        probe_files.append(spec.origin)
    keep |= {os.path.realpath(k) for k in keep}
    keep_list = sorted(k for k in keep if os.path.isdir(k))
    overlay = {str(Path(__file__).resolve().parent.parent), os.getcwd(), home}
    if mode == "root":
        for folder in keep_list:
            for part in reversed(Path(folder).parents):
                if not os.stat(part).st_mode & stat.S_IXOTH:
                    overlay.add(str(part))
                    break
    fine = [o for o in overlay if o != "/" and not any(_inside(s, o) for s in SYSTEM_FOLDERS)
            and not any(_inside(o, k) for k in keep_list)]
    outermost = [o for o in fine if not any(p != o and _inside(o, p) for p in fine)]
    return keep_list, sorted(outermost), probe_files


def _inside(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or lies beneath it."""
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _sandbox_main(sock: socket.socket, config: dict) -> None:
    import torch

    _isolate(config, drop_root=config["drop_root"], keep_fd=sock.fileno())
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # Only the standard library and installed packages stay importable; editable installs of
    # this project (the reference, the graders) are dropped along with the project folder.
    sys.path[:] = [os.getcwd()] + [p for p in sys.path if p and any(_inside(p, k) for k in config["keep"])]
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
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


def _isolate(config: dict, drop_root: bool, keep_fd: int) -> list[str]:
    """Everything a sandbox does to itself before it runs a line of the submission; returns what did not hold.

    Afterwards the working folder is the sandbox's scratch folder."""
    cpu, memory, file_size, processes, scratch_bytes = config["limits"]
    weaknesses: list[str] = []
    os.setsid()
    public = {Path(p).name: Path(p).read_bytes() for p in config["public"]}
    host_pid = int(os.readlink("/proc/self"))  # before /proc is replaced: unique on this machine
    private = False
    if config["mode"]:
        weaknesses += _private_namespaces()
        private = not weaknesses
        weaknesses += _private_filesystem(config, scratch_bytes) if private else []
    scratch = SCRATCH if private else tempfile.mkdtemp(prefix="submission-", dir=config["scratch_root"])
    os.makedirs(scratch, exist_ok=True)
    for name, data in public.items():
        Path(scratch, name).write_bytes(data)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, 65536)
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "HOME": scratch, "OMP_NUM_THREADS": "1",
                       "MPLCONFIGDIR": scratch, "MPLBACKEND": "Agg"})
    mapped = _mapped_bytes()  # torch already maps a lot of address space; the limit is on top
    for limit, value in ((resource.RLIMIT_CPU, cpu), (resource.RLIMIT_AS, mapped + memory),
                         (resource.RLIMIT_FSIZE, file_size), (resource.RLIMIT_NPROC, processes),
                         (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))
    if drop_root:  # a uid of its own: other sandboxes' processes do not count against its process limit
        uid = SANDBOX_UID_BASE + host_pid
        try:
            os.chown(scratch, uid, uid)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)  # leaving uid 0 clears every capability
        except OSError:  # root of a container's user namespace, where that uid does not exist
            weaknesses.append("sandboxes cannot take a uid of their own, so they run as root without capabilities")
    if os.geteuid() == 0:  # root of a user namespace, or root that cannot leave uid 0
        _drop_capabilities()
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        weaknesses.append("no no_new_privs")
    return weaknesses


def _private_namespaces() -> list[str]:
    """New mount, network and IPC namespaces; what could not be had."""
    if _libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET) == 0:
        return []
    if _libc.unshare(CLONE_NEWNS) == 0:
        return ["no network namespace (submissions can reach the network and each other)"]
    return ["no mount namespace (submissions can read the graders and write your files)"]


def _private_filesystem(config: dict, scratch_bytes: int) -> list[str]:
    """Hide, overlay, make read-only, then give the sandbox its own /tmp and /proc; what did not hold."""
    if not _mount(None, "/", None, MS_REC | MS_PRIVATE):  # else every mount below would reach the grader's system
        return ["no private mounts (submissions can read the graders and write your files)"]
    weaknesses = []
    hidden = [_mount("tmpfs", p, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k") for p in config["hidden"] if os.path.isdir(p)]
    covered = [_overlay(folder, config["keep"], "size=4k,mode=755", read_only=True) for folder in config["overlay"]]
    if not all(hidden + covered):
        weaknesses.append("a secret folder could not be hidden")
    attr = (ctypes.c_uint64 * 4)(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, 0, 0)
    if _libc.syscall(SYS_MOUNT_SETATTR, AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr)) != 0:
        weaknesses.append("no read-only file system (submissions can write your files)")
    for folder in PRIVATE_TMP:
        if os.path.isdir(folder) and not _overlay(folder, config["keep"], f"size={scratch_bytes},mode=1777", read_only=False):
            weaknesses.append(f"no private {folder}")
    if os.getpid() != 1 or not _mount("proc", "/proc", "proc", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC):
        weaknesses.append("no private /proc (submissions can read other processes' command lines)")
    return weaknesses


def _overlay(folder: str, keep: list[str], options: str, read_only: bool) -> bool:
    """Cover `folder` with an empty tmpfs, then bind back the folders of `keep` that lie beneath it."""
    beneath = [k for k in keep if k != folder and _inside(k, folder)]
    beneath = [k for k in beneath if not any(o != k and _inside(k, o) for o in beneath)]
    fds = [os.open(k, os.O_PATH | os.O_DIRECTORY) for k in beneath]  # before the originals are covered
    try:
        if not _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, options):
            return False
        for k, fd in zip(beneath, fds):
            os.makedirs(k, mode=0o755, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", k, None, MS_BIND | MS_REC)
        return not read_only or _mount(None, folder, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    finally:
        for fd in fds:
            os.close(fd)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, options: str | None = None) -> bool:
    encode = lambda s: None if s is None else s.encode()  # noqa: E731
    return _libc.mount(encode(source), encode(target), encode(fstype), flags, encode(options)) == 0


def _drop_capabilities() -> None:
    """No capability left, even in the sandbox's own user namespace (it could unmount what hides the graders)."""
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if _libc.capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        os._exit(70)  # never run a submission with capabilities


def _mapped_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    _zygote_main(int(sys.argv[1]))
