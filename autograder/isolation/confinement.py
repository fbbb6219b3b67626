"""What a sandbox does to itself before it runs a line of a submission, and how the zygote
that forks sandboxes makes that possible. Runs inside the zygote and its children only.

Each sandbox gets, where the system allows:

- its own PID namespace (pid 1 of it: it sees and signals only its own processes, and all
  of them die with it), mount, network and IPC namespaces: no network, no shared memory or
  message queues with anything else;
- a file system of its own: an empty root with the allow-list of `policy.View` bound
  read-only, what must stay hidden covered, a private /proc and /dev, and a private,
  size-limited /tmp as its only writable place (its scratch folder);
- a cgroup of its own where the system has them (`cgroups`): at most about one core, and
  limits on processes and memory that count its children too;
- an identity without privilege: under root a uid of its own, otherwise every capability
  dropped inside a user namespace; no_new_privs; a seccomp filter (`seccomp`) that denies
  the system calls a grader never needs, the kernel keyring's among them;
- rlimits on CPU time, address space, file size and processes, and an empty environment.
"""

from __future__ import annotations

import ctypes
import os
import resource
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from . import cgroups, identity, landlock, seccomp
from .limits import SandboxConfig
from .policy import View
from .weakness import Gap, Weakness

SCRATCH = "/tmp/submission"
CGROUP_HEADROOM_BYTES = 2**30  # page tables, page cache and the allocator's slack beyond the memory limit
NEW_ROOT = "/tmp"  # where the sandbox's root is assembled (in its own mount namespace) before pivot_root

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x20000, 0x8000000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 32, 4096, 16384, 1 << 18
AT_FDCWD, AT_RECURSIVE, MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID = -100, 0x8000, 1, 2
MNT_DETACH = 2
SYSCALLS = {"x86_64": {"pivot_root": 155, "mount_setattr": 442}, "aarch64": {"pivot_root": 41, "mount_setattr": 442}}
PR_SET_NO_NEW_PRIVS, PR_SET_PDEATHSIG, PR_SET_KEEPCAPS, PR_SET_DUMPABLE, CAPABILITY_VERSION_3 = 38, 1, 8, 4, 0x20080522
CAP_SETUID = 7
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # glibc's mallopt
MMAP_THRESHOLD_MAX = 32 * 2**20  # the largest glibc accepts on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX)
MAPPED_FROM_BYTES = 64 * 2**10  # under an exact cap, allocations of this size or more are mappings of their own

_libc = ctypes.CDLL(None, use_errno=True)


# ---------------------------------------------------------------- the zygote


def enter_zygote_namespaces(control_fd: int, afterwards: Callable[[], None] = lambda: None) -> str:
    """Make the zygote pid 1 of a PID namespace of its own (inside a user namespace of its own when
    not root), so that it may give each sandbox a fresh PID namespace, and all die with it. The
    process left outside waits for it, then runs `afterwards` (removing its cgroups).

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
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _, status = os.waitpid(child, 0)
        afterwards()
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


def fork_sandbox(mode: str, own_pid_ns: int) -> int:
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


def _first_to_go() -> None:
    """When memory runs out (a container's limit), the kernel kills a sandbox, never the grader."""
    try:
        Path("/proc/self/oom_score_adj").write_text("1000")
    except OSError:
        pass


def _processes_of(uid: int) -> int:
    """How many processes `uid` has now: where a sandbox runs under the grader's own uid (an ordinary
    user's host), the process limit counts them all, so it is set this much above the limit."""
    count, mine = 0, f"Uid:\t{uid}\t"  # the real uid (a process that is not dumpable shows root as its owner)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/status") as status:
                    count += any(line.startswith(mine) for line in status)
            except OSError:
                pass
    return count


def recount_processes(processes: int) -> None:
    """For a part just forked: where sandboxes share the grader's uid (an ordinary user's host), its process
    limit is set again `processes` above what the uid runs now, not when its sandbox was confined, so that
    the room of processes that have ended since (other submissions' sandboxes) is not its to take. Only
    ever lowered; where the count cannot be read, left as it is. A sandbox with a uid of its own counts
    only its own processes here, so its limit stays as it was."""
    if os.geteuid() == 0:
        return
    try:
        running = _processes_of(os.getuid())
    except OSError:
        return
    limit = processes + running
    if running and limit < resource.getrlimit(resource.RLIMIT_NPROC)[0]:
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, limit))


def keep_memory_private() -> None:
    """For the grader's own processes: not dumpable, so that a sandbox running under the same uid (an
    ordinary user's host, without namespaces) cannot read their memory or /proc entries."""
    _libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def die_with_parent() -> None:
    """SIGKILL when the parent goes: a grading worker or zygote must not outlive what started it."""
    import signal

    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


# ---------------------------------------------------------------- one sandbox


@dataclass(frozen=True)
class Host:
    """What the zygote found out about this machine before it served (zygote.run): every sandbox it forks
    sets itself up by it."""

    mode: str  # the zygote's privilege over its sandboxes (enter_zygote_namespaces): "root", "user", "" (none)
    real_root: bool  # the zygote runs as the machine's root
    pid_namespace: int  # what sandboxes' pids are counted in (identity)
    cgroups: dict | None  # the tree of its sandboxes' cgroups (cgroups.create), None where there is none
    scratch_root: str | None  # where scratch folders are made when sandboxes have no private /tmp
    # How sandboxes leave root (the probe's finding, zygote._probe): "uid", a uid of its own; "fsuid", a uid
    # of its own that still opens files as their root owner would (Python in a home of mode 700, where the
    # view is Landlock's, which decides what may be opened); "" to stay uid 0 without capabilities (and
    # whenever the zygote is not root).
    drop_root: str = ""


def confine(config: SandboxConfig, host: Host, name: str, keep_fd: int) -> list[Weakness]:
    """Everything a sandbox (its cgroup `name`) does to itself before it runs a line of the submission;
    returns what did not hold. Afterwards the working folder is the sandbox's scratch folder."""
    limits, view = config.limits, config.view
    processes = limits.processes
    weaknesses: list[Weakness] = []
    os.setsid()
    host_pid = int(os.readlink("/proc/self"))  # before /proc is replaced: unique in the zygote's first PID namespace
    if host.cgroups is not None:
        # Above what the address-space limit below lets one process touch, so that a plain memory bomb
        # fails at once with an allocation error; the cgroup bounds the whole tree (children, /tmp),
        # and a process stopped by it is first starved of page cache, which takes a long while.
        weaknesses += cgroups.join(host.cgroups, name, processes,
                                   limits.memory_bytes + limits.scratch_bytes + CGROUP_HEADROOM_BYTES)
    private = False
    if host.mode:
        missing = _private_namespaces()
        private = not missing
        weaknesses += missing + (_private_filesystem(view, limits.scratch_bytes) if private else [])
    scratch = SCRATCH if private else tempfile.mkdtemp(prefix="submission-", dir=host.scratch_root)
    os.makedirs(scratch, exist_ok=True)
    for file, data in config.public.items():
        Path(scratch, file).write_bytes(data)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, keep_fd)
    os.closerange(keep_fd + 1, 65536)
    os.chdir(scratch)
    os.environ.clear()
    os.environ.update({"PATH": "/usr/bin:/bin", "HOME": scratch, "OMP_NUM_THREADS": "1",
                       "MPLCONFIGDIR": scratch, "MPLBACKEND": "Agg"})
    _first_to_go()
    mapped = mapped_bytes() or 0  # torch already maps a lot of address space; the limit is on top
    if not host.drop_root and os.geteuid() != 0:  # the grader's own uid: its count of processes is shared
        processes += _processes_of(os.getuid())
    address_space = mapped + limits.memory_bytes
    if view.gpu:  # CUDA reserves address space for all of the GPU's memory and more as it starts: under a cap
        address_space = resource.RLIM_INFINITY  # it cannot start; the cgroup bounds memory instead
        if host.cgroups is None:
            weaknesses.append(Weakness(Gap.LIMITS, "no memory limit: CUDA cannot start under an address-space limit, "
                                                   "and there is no cgroup"))
    for limit, value in ((resource.RLIMIT_CPU, limits.cpu_seconds), (resource.RLIMIT_AS, address_space),
                         (resource.RLIMIT_FSIZE, limits.file_bytes), (resource.RLIMIT_NPROC, processes),
                         (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(limit, (value, value))
    ruleset = None
    if not private:  # no namespaces here: the view is Landlock's (its paths opened while they can be)
        ruleset, missing = landlock.prepare(view, scratch)
        weaknesses += missing
    if host.drop_root:  # a uid of its own: no other sandbox's processes (of any run here) count against its limit
        uid = identity.sandbox_uid(host_pid, host.pid_namespace)
        weaknesses += _own_uid(uid, scratch, keep_file_access=host.drop_root == "fsuid")
        # Changing uid made it not dumpable: only a process with CAP_SYS_PTRACE could read its memory
        # counts (/proc/PID/io, maps, smaps_rollup), which a container's root lacks. Dumpable, its owner
        # may read them too, as the grader does (isolation.held); no other process has its uid.
        _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    if os.geteuid() == 0:  # root of a user namespace, or root that cannot leave uid 0
        _drop_capabilities()
    if ruleset is not None:
        landlock.enforce(ruleset)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        weaknesses.append(Weakness(Gap.FILTER, "no no_new_privs"))
    if _libc.prctl(seccomp.PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0:  # a page fault maps one page (isolation.held)
        weaknesses.append(Weakness(Gap.LIMITS, "transparent huge pages left on"))
    weaknesses += seccomp.install(shared_files=view.gpu)
    return weaknesses


def _own_uid(uid: int, scratch: str, keep_file_access: bool) -> list[Weakness]:
    """Leave root for `uid` (every capability goes with it). With `keep_file_access`, files are still
    opened as uid 0 would open them without capabilities (the file-system uid), so a Python installed
    in root's private home stays readable: Landlock, not the file modes, decides what may be opened."""
    try:
        if not keep_file_access:
            os.chown(scratch, uid, uid)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        if keep_file_access:
            _libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)
        os.setresuid(uid, uid, uid)
        if keep_file_access:
            _set_effective_capabilities(1 << CAP_SETUID)
            _libc.setfsuid(0)
            _drop_capabilities()
            _libc.prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0)
            if _libc.setfsuid(-1) != 0:  # what it is now (a failing call reports the current value)
                os._exit(70)
    except OSError:  # root of a container's user namespace, where that uid does not exist
        return [Weakness(Gap.UID, "sandboxes cannot take a uid of their own, so they run as root without capabilities")]
    return []


def _private_namespaces() -> list[Weakness]:
    """New mount, network and IPC namespaces; what could not be had."""
    if _libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET) == 0:
        return []
    if _libc.unshare(CLONE_NEWNS) == 0:
        return [Weakness(Gap.NAMESPACES, "no network namespace (submissions can reach the network and each other)")]
    return [Weakness(Gap.NAMESPACES, "no mount namespace (submissions can read the graders and write your files)")]


def _private_filesystem(view: View, scratch_bytes: int) -> list[Weakness]:
    """An empty root holding only the view, read-only, with a private /proc, /dev and /tmp."""
    if not _mount(None, "/", None, MS_REC | MS_PRIVATE):  # else every mount below would reach the grader's system
        return [Weakness(Gap.NAMESPACES, "no private mounts (submissions can read the graders and write your files)")]
    # what each path is, and a handle on it, before anything is covered (a venv may live under /tmp)
    links = {p: os.readlink(p) for p in view.expose if os.path.islink(p)}
    sources = {p: os.open(p, os.O_PATH | os.O_CLOEXEC) for p in (*view.expose, *view.devices, os.devnull)
               if os.path.exists(p) and p not in links}
    try:
        return _assemble_root(view, sources, links, scratch_bytes)
    finally:
        for fd in sources.values():
            os.close(fd)


def _assemble_root(view: View, sources: dict[str, int], links: dict[str, str], scratch_bytes: int) -> list[Weakness]:
    root = NEW_ROOT
    if not _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755"):
        return [Weakness(Gap.NAMESPACES, "no private file system (submissions can read the graders and write your files)")]
    # the private /tmp first, so what is exposed inside it (a checkout or venv under /tmp) is bound on top
    os.makedirs(f"{root}/tmp", mode=0o755, exist_ok=True)
    ok = _mount("tmpfs", f"{root}/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={scratch_bytes},mode=1777")
    hidden = set(view.hide)
    for path in sorted({*view.expose, *view.hide}, key=lambda p: (p.count("/"), p)):  # outer before inner
        target = root + path
        if path in hidden:
            ok &= _cover(target, sources[os.devnull])
        elif path in links:
            os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
            if not os.path.lexists(target):
                os.symlink(links[path], target)
        elif path in sources:
            ok &= _bind(sources[path], target, directory=_is_folder(sources[path]))
    os.makedirs(f"{root}/dev", mode=0o755, exist_ok=True)
    ok &= _mount("tmpfs", f"{root}/dev", "tmpfs", MS_NOSUID, "size=64k,mode=755")
    for device in view.devices:
        ok &= _bind(sources[device], root + device, directory=_is_folder(sources[device]))
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    for folder in ("proc", "dev/shm", "var"):
        os.makedirs(f"{root}/{folder}", mode=0o755, exist_ok=True)
    os.symlink("/tmp", f"{root}/var/tmp")
    weaknesses = [] if ok else [Weakness(Gap.VIEW, "a part of the file system could not be set up as planned")]
    # while the old /proc is still visible: a user namespace may mount a new one only then
    if os.getpid() != 1 or not _mount("proc", f"{root}/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC):
        weaknesses.append(Weakness(Gap.VIEW, "no private /proc (submissions can read other processes' command lines)"))
    os.makedirs(f"{root}/.old", exist_ok=True)
    arch = SYSCALLS.get(os.uname().machine)
    if arch is None or _libc.syscall(arch["pivot_root"], root.encode(), f"{root}/.old".encode()) != 0:
        return [Weakness(Gap.NAMESPACES, "no private file system (pivot_root failed: submissions can read the graders)")]
    os.chdir("/")
    _libc.umount2(b"/.old", MNT_DETACH)
    os.rmdir("/.old")
    read_only = (ctypes.c_uint64 * 4)(MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0, 0, 0)  # set, clear, ...
    writable = (ctypes.c_uint64 * 4)(0, MOUNT_ATTR_RDONLY, 0, 0)
    if (_libc.syscall(arch["mount_setattr"], AT_FDCWD, b"/", AT_RECURSIVE, ctypes.byref(read_only),
                      ctypes.sizeof(read_only)) != 0
            # /tmp alone writable again: what is bound inside it stays read-only
            or _libc.syscall(arch["mount_setattr"], AT_FDCWD, b"/tmp", 0, ctypes.byref(writable),
                             ctypes.sizeof(writable)) != 0):
        weaknesses.append(Weakness(Gap.VIEW, "no read-only file system (submissions can write what they see)"))
    if not _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"size={scratch_bytes},mode=1777"):
        weaknesses.append(Weakness(Gap.VIEW, "no private /dev/shm"))
    return weaknesses


def _is_folder(fd: int) -> bool:
    return stat.S_ISDIR(os.fstat(fd).st_mode)


def _bind(fd: int, target: str, directory: bool) -> bool:
    os.makedirs(target if directory else os.path.dirname(target), mode=0o755, exist_ok=True)
    if not directory and not os.path.exists(target):
        Path(target).touch(mode=0o644)
    return _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC)


def _cover(target: str, null_fd: int) -> bool:
    """An empty folder over a folder, an empty file over a file."""
    if os.path.isdir(target):
        return _mount("tmpfs", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV, "size=4k,mode=755")
    if os.path.lexists(target):
        return _mount(f"/proc/self/fd/{null_fd}", target, None, MS_BIND)
    return True  # not in the view at all


def _mount(source: str | None, target: str, fstype: str | None, flags: int, options: str | None = None) -> bool:
    encode = lambda s: None if s is None else s.encode()  # noqa: E731
    return _libc.mount(encode(source), encode(target), encode(fstype), flags, encode(options)) == 0


def _drop_capabilities() -> None:
    """No capability left, even in the sandbox's own user namespace (it could unmount what hides the graders)."""
    _set_effective_capabilities(0, permitted=0)


def _set_effective_capabilities(effective: int, permitted: int | None = None) -> None:
    """capset: `effective` (and `permitted`, unchanged when None) for the first 32 capabilities, none
    above, nothing inheritable. (The kernel's layout: effective, permitted, inheritable, for capabilities
    0 to 31, then the same for 32 to 63.)"""
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if permitted is None:
        if _libc.capget(ctypes.byref(header), ctypes.byref(data)) != 0:
            os._exit(70)
        data[0] = data[1] & effective
    else:
        data[0], data[1], data[4] = effective, permitted, 0
    data[2] = data[3] = data[5] = 0
    if _libc.capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        os._exit(70)  # never run a submission with capabilities it was not meant to keep


def cap_memory(extra_bytes: int) -> None:
    """At most `extra_bytes` more address space than this process maps now, soft and hard limit both, so
    the code it bounds cannot raise it again (only lowered)."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = (mapped_bytes() or 0) + max(0, extra_bytes)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def without_heap_slack() -> None:
    """From now on, every allocation of MAPPED_FROM_BYTES or more is new memory of its own size, given back
    when it is freed, so that the process's peak resident memory counts what later code allocates at once
    (isolation.held), not the free heap earlier work left behind (which would serve it unseen). Costs a page
    fault per page of every such allocation. glibc's malloc only; elsewhere nothing."""
    try:
        mallopt, malloc_trim, malloc, free = _libc.mallopt, _libc.malloc_trim, _libc.malloc, _libc.free
    except AttributeError:
        return
    malloc.restype, malloc.argtypes, free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
    if mallopt(M_MMAP_THRESHOLD, MAPPED_FROM_BYTES) != 1:  # also stops glibc raising it after a large free
        return
    malloc_trim(0)  # the free top of the heap goes back
    header = ctypes.sizeof(ctypes.c_size_t)
    size = 2**30
    while size >= MAPPED_FROM_BYTES:  # every free chunk inside the heap that could serve a large allocation is
        while True:                   # taken, for good (the process is discarded after the measured call)
            chunk = malloc(size)
            if not chunk:
                break
            if ctypes.c_size_t.from_address(chunk - header).value & 2:  # IS_MMAPPED: no free chunk was that large
                free(chunk)
                break
        size //= 2


def reuse_freed_heap() -> None:
    """From now on, memory that is freed stays in the heap and serves later allocations, so that a page is
    touched for the first time once, however often the code allocates and frees (isolation.held counts
    first touches): no allocation under glibc's largest threshold maps memory of its own, and the heap's
    top is never given back. glibc's malloc only; elsewhere nothing."""
    try:
        mallopt = _libc.mallopt
    except AttributeError:
        return
    mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD_MAX)
    mallopt(M_TRIM_THRESHOLD, -1)  # as a size_t: never


def mapped_bytes() -> int | None:
    """This process's address space (VmSize), or None where its /proc entry cannot be read."""
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return None


def readable_by_others(paths: list[str]) -> bool:
    """Whether a process of another uid could read these files (then sandboxes can drop root)."""
    return os.geteuid() != 0 and all(os.access(p, os.R_OK) for p in paths)

