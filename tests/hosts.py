"""The hosts courses grade on, emulated on this machine (as root) for the grader's tests.

    python tests/hosts.py HOST [--cpu 0.5] [--memory 768M] -- COMMAND...

runs COMMAND as it would run on HOST:

- `docker`: root without CAP_SYS_ADMIN (Docker's default capability set), no_new_privs, a seccomp filter
  like Docker's default profile (no new namespaces, no mounts, no keyring), and the cgroup file system
  read-only, as Docker mounts it;
- `user`: an ordinary user (uid 1000, as a Kubernetes pod runs JupyterHub) with no capability and no
  user namespaces, for whom Python, its environment and the checkout are readable, as they would be on
  such a host: root's private home, and every folder above (or being) one of them that others may not
  pass (a checkout cloned into `mktemp -d`), are opened for it in a mount namespace of the launcher's own
  (the host's files are not changed). Where their files themselves are their owner's alone (a umask of
  077), `available` says so and the host is skipped;
- `nolandlock`: `docker` on a kernel without Landlock (its system calls fail with ENOSYS);
- `runc`: a real container, started by runc (Debian's) from an OCI spec with Docker's defaults: its own
  PID, mount, network, IPC and UTS namespaces, Docker's default capabilities (no CAP_SYS_ADMIN), a
  seccomp profile like Docker's, and no cgroup file system; its root file system is this machine's
  (bound read-write), so the checkout and its environment are there. With `--cpu`/`--memory`, runc
  puts it in a cgroup of those limits.

`--cpu` and `--memory` put COMMAND in a cgroup of that CPU quota and memory limit first (Gradescope's
defaults are 0.5 CPU and 768 MB), where the machine's cgroups are writable. `available(HOST)` says
whether this machine can emulate HOST, and why not.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.dont_write_bytecode = True  # a launcher run beside the suite: no __pycache__ in the checkout it imports from

from autograder.isolation import seccomp  # noqa: E402 - the grader's own filter builder, another deny list

HOSTS = ("docker", "user", "nolandlock", "runc")
DOCKER_CAPABILITIES = ("CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
                       "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
                       "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE")
USER_ID = 1000
CLONE_NEWNS = 0x20000
MS_REC, MS_PRIVATE, MS_BIND, MS_RDONLY, MS_REMOUNT = 16384, 1 << 18, 4096, 1, 32
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, CAP_SYS_ADMIN = 38, 24, 21
# As Docker's default profile: what needs CAP_SYS_ADMIN there, and the keyring.
DOCKER_DENIED = ("unshare", "setns", "mount", "umount2", "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig",
                 "fsmount", "fspick", "mount_setattr", "add_key", "request_key", "keyctl", "bpf", "perf_event_open")
LANDLOCK = ("landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self")
CGROUP_ROOT = Path("/sys/fs/cgroup")

_libc = ctypes.CDLL(None, use_errno=True)


def available(host: str) -> str:
    """"" when this machine can emulate `host`, else why not."""
    if os.geteuid() != 0:
        return "emulating another host needs root"
    if os.uname().machine not in seccomp.SYSCALL_NUMBERS:
        return f"no seccomp filter for {os.uname().machine}"
    if host == "user":
        why = _user_cannot_read()
        if why:
            return why
    if host == "runc" and not shutil.which("runc"):
        return "no runc (Debian's package runc)"
    return ""


def limits_available() -> str:
    """"" when a cgroup with a CPU quota and a memory limit can be made here, else why not."""
    if not all(os.access(CGROUP_ROOT / c, os.W_OK) for c in ("cpu", "memory")) and not (
            (CGROUP_ROOT / "cgroup.controllers").exists() and os.access(CGROUP_ROOT, os.W_OK)):
        return "no writable cgroup tree with cpu and memory controllers"
    return ""


def command(host: str, argv: list[str], cpu: float | None = None, memory: str | None = None) -> list[str]:
    """The command line that runs `argv` on `host`."""
    limits = [*(["--cpu", str(cpu)] if cpu else []), *(["--memory", memory] if memory else [])]
    return [sys.executable, str(Path(__file__).resolve()), host, *limits, "--", *argv]


def _installs() -> list[Path]:
    """What the ordinary user's grader runs from: the checkout, the environment, the Python under it and any
    other folder its imports come from (a .pth file's), each the outermost of them that holds it."""
    found = {Path(os.path.realpath(p)) for p in (ROOT, sys.prefix, sys.base_prefix, *sys.path) if p and os.path.isdir(p)}
    return sorted(f for f in found if not any(o != f and o in f.parents for o in found))


def _closed_folders(installs: list[Path] | None = None) -> dict[Path, int]:
    """The folders the `user` host opens, outer first, each with the mode it gets: every folder above an
    install (`_installs()` unless given) that others may not pass through (a checkout cloned into `mktemp -d`),
    which gets 711 (passed, not listed), and an install that others may not list and pass itself (cloned
    straight into it), which gets 755. Root's home is always opened (755, as before): the user's home is made
    in it."""
    folders = {Path("/root"): 0o755}
    for install in _installs() if installs is None else installs:
        for folder in [*reversed(install.parents), install]:
            needed = 0o005 if folder == install else 0o001
            if folder not in folders and os.stat(folder).st_mode & needed != needed:
                folders[folder] = 0o755 if folder == install else 0o711
    return dict(sorted(folders.items(), key=lambda item: len(item[0].parts)))


def _user_cannot_read() -> str:
    """"" when, with `_closed_folders` opened, an ordinary user can run Python and read its standard library,
    torch and the grader; else why not (their own files or folders are their owner's alone, as a umask of 077
    makes them: opening those would no longer be the same install)."""
    import importlib.util

    wanted = {"Python": (Path(os.path.realpath(os.path.dirname(sys.executable))) / os.path.basename(sys.executable),
                         0o001),
              "the real Python": (Path(os.path.realpath(sys.executable)), 0o001),
              "the standard library": (Path(os.path.realpath(os.__file__)), 0o004)}
    for module in ("torch", "autograder"):
        spec = importlib.util.find_spec(module)
        if spec is not None and spec.origin:
            wanted[module] = (Path(os.path.realpath(spec.origin)), 0o004)
    return _unreadable(wanted, _closed_folders())


def _unreadable(wanted: dict[str, tuple[Path, int]], opened: dict[Path, int]) -> str:
    """"" when others have, for each of `wanted` (what: (file, the bits others need on it)), those bits, the
    folder holding it listed and passed, and every folder above passed, the folders `opened` aside; else why
    not."""
    for what, (file, bits) in wanted.items():
        # the file itself, the folder holding it (listed by imports), then every folder above that is not opened
        for path, needed in ((file, bits), (file.parent, 0o005), *((p, 0o001) for p in file.parents[1:])):
            if path in opened:
                continue
            mode = os.stat(path).st_mode
            if mode & needed != needed:
                return (f"an ordinary user could not read {what} ({file}): {path} is mode {mode & 0o777:o}, closed "
                        f"to others inside the install (files made under a umask of 077?)")
    return ""


def _make_limits(cpu: float | None, memory: str | None) -> list[Path]:
    """Cgroup folders of that CPU quota and memory limit (cgroup v2, or v1's cpu and memory hierarchies)."""
    name = f"autograder-host-{os.getpid()}"
    if (CGROUP_ROOT / "cgroup.controllers").exists() and not (CGROUP_ROOT / "cpu").exists():
        folder = CGROUP_ROOT / name
        folder.mkdir()
        if cpu:
            (folder / "cpu.max").write_text(f"{int(cpu * 100_000)} 100000")
        if memory:
            (folder / "memory.max").write_text(str(_bytes(memory)))
        return [folder]
    folders = []
    for controller, settings in (("cpu", {"cpu.cfs_period_us": "100000",
                                          "cpu.cfs_quota_us": str(int(cpu * 100_000)) if cpu else ""}),
                                 ("memory", {"memory.limit_in_bytes": str(_bytes(memory)) if memory else ""})):
        folder = CGROUP_ROOT / controller / name
        folder.mkdir()
        for file, value in settings.items():
            if value:
                (folder / file).write_text(value)
        folders.append(folder)
    return folders


def _remove(folder: Path) -> None:
    """The cgroup, once what the command left in it (its grader's last processes) is gone."""
    import signal
    import time

    for _ in range(200):
        pids = [int(p) for p in (folder / "cgroup.procs").read_text().split()]
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            folder.rmdir()
            return
        except OSError:
            time.sleep(0.05)
    raise OSError(f"{folder} would not empty")


def _peak_memory(folders: list[Path]) -> int | None:
    for folder in folders:
        for name in ("memory.max_usage_in_bytes", "memory.peak"):
            if (folder / name).exists():
                return int((folder / name).read_text())
    return None


def _bytes(text: str) -> int:
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def _mount(source, target, flags) -> None:
    if _libc.mount(source, target.encode() if isinstance(target, str) else target, None, flags, None) != 0:
        raise OSError(ctypes.get_errno(), f"mount {target}")


def _private_mounts() -> None:
    if _libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS)")
    _mount(None, "/", MS_REC | MS_PRIVATE)


def _cgroups_read_only() -> None:
    """As Docker mounts the cgroup file system for a container: read-only."""
    mounts = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    for target in sorted((m for m in mounts if m == str(CGROUP_ROOT) or m.startswith(f"{CGROUP_ROOT}/")), key=len):
        _mount(None, target, MS_REMOUNT | MS_BIND | MS_RDONLY)


def _open_for_others(folder: Path, mode: int) -> None:
    """`folder` with `mode` for others: a tmpfs over it, holding its own entries again (bound; symbolic links
    made again). Only this mount namespace sees it: the folder itself is not changed."""
    links, entries = {}, {}
    for name in os.listdir(folder):
        if os.path.islink(folder / name):
            links[name] = os.readlink(folder / name)
        else:
            entries[name] = os.open(folder / name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    if _libc.mount(b"tmpfs", str(folder).encode(), b"tmpfs", 0, f"mode={mode:o}".encode()) != 0:
        raise OSError(ctypes.get_errno(), f"mount tmpfs {folder}")
    for name, target in links.items():
        os.symlink(target, folder / name)
    for name, fd in entries.items():
        target = folder / name
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            target.mkdir()
        else:
            target.touch()
        _mount(f"/proc/self/fd/{fd}".encode(), str(target), MS_BIND | MS_REC)
        os.close(fd)


def _drop_sys_admin() -> None:
    if _libc.prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "drop CAP_SYS_ADMIN from the bounding set")
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    if _libc.capget(ctypes.byref(header), ctypes.byref(data)) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    for word in (0, 1, 2):  # effective, permitted, inheritable of capabilities 0..31
        data[word] &= ~(1 << CAP_SYS_ADMIN)
    if _libc.capset(ctypes.byref(header), ctypes.byref(data)) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _become_user(home: str) -> None:
    os.setgroups([])
    os.setresgid(USER_ID, USER_ID, USER_ID)
    os.setresuid(USER_ID, USER_ID, USER_ID)  # every capability goes
    os.environ["HOME"] = home


def _container(argv: list[str], cpu: float | None, memory: str | None) -> int:
    """`argv` in a container started by runc (see the module's docstring); its exit status."""
    import json
    import subprocess
    import tempfile

    bundle = Path(tempfile.mkdtemp(prefix="autograder-container-"))
    rootfs = bundle / "rootfs"
    rootfs.mkdir()
    _mount(b"/", str(rootfs), MS_BIND)  # this machine's root, without what is mounted on top of it
    try:
        # as Docker's profile: the denied calls, clone3 unsupported, clone with any namespace flag refused
        flags = [1 << bit for bit in range(32) if seccomp.NAMESPACE_FLAGS & (1 << bit)]
        rules = [{"names": list(DOCKER_DENIED), "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
                 {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38}]
        rules += [{"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
                   "args": [{"index": 0, "value": flag, "valueTwo": flag, "op": "SCMP_CMP_MASKED_EQ"}]} for flag in flags]
        spec = {
            "ociVersion": "1.0.2",
            "root": {"path": str(rootfs), "readonly": False},
            "hostname": "container",
            "process": {"terminal": False, "user": {"uid": 0, "gid": 0}, "args": _ascii_args(argv), "cwd": os.getcwd(),
                        "env": [f"{k}={v}" for k, v in os.environ.items()],
                        "capabilities": {k: list(DOCKER_CAPABILITIES) for k in ("bounding", "effective", "permitted")},
                        "noNewPrivileges": False},
            "mounts": [
                {"destination": "/proc", "type": "proc", "source": "proc"},
                {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "mode=755"]},
                {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
                 "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
                {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
                 "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
                {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
                {"destination": "/tmp", "type": "bind", "source": "/tmp", "options": ["rbind", "rw"]},
            ],
            "linux": {
                "namespaces": [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount")],
                "seccomp": {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"],
                            "syscalls": rules},
                "maskedPaths": ["/proc/kcore", "/proc/keys", "/proc/timer_list", "/sys/firmware"],
                "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"],
                "devices": [],
            },
        }
        resources = {}
        if cpu:
            resources["cpu"] = {"quota": int(cpu * 100_000), "period": 100_000}
        if memory:
            resources["memory"] = {"limit": _bytes(memory)}
        if resources:
            spec["linux"]["resources"] = resources
            spec["linux"]["cgroupsPath"] = f"/autograder-container-{os.getpid()}"
        (bundle / "config.json").write_text(json.dumps(spec))
        return subprocess.run(["runc", "run", "--bundle", str(bundle), f"autograder-{os.getpid()}"]).returncode
    finally:
        _libc.umount2(str(rootfs).encode(), 2)
        shutil.rmtree(bundle, ignore_errors=True)


def _ascii_args(argv: list[str]) -> list[str]:
    """`argv` through a spec that holds only text (file names need not be UTF-8): hex, undone inside."""
    undo = "import os, sys; a = [os.fsdecode(bytes.fromhex(x)) for x in sys.argv[1:]]; os.execvp(a[0], a)"
    return [sys.executable, "-c", undo, *(os.fsencode(a).hex() for a in argv)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("host", choices=HOSTS)
    parser.add_argument("--cpu", type=float)
    parser.add_argument("--memory")
    if "--" not in sys.argv:
        parser.error("the command goes after --")
    split = sys.argv.index("--")
    args, argv = parser.parse_args(sys.argv[1:split]), sys.argv[split + 1:]
    if args.host == "runc":
        return _container(argv, args.cpu, args.memory)
    if args.cpu or args.memory:  # the command runs in the cgroup; this process waits outside, then removes it
        folders = _make_limits(args.cpu, args.memory)
        pid = os.fork()
        if pid:
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            peak = _peak_memory(folders)
            if peak is not None:
                print(f"hosts: peak memory of the command and all it started: {peak / 2**20:.0f} MiB", file=sys.stderr)
            for folder in folders:
                _remove(folder)
            return status
        for folder in folders:
            (folder / "cgroup.procs").write_text("0")
    _private_mounts()
    _cgroups_read_only()
    if args.host == "user":
        for folder, mode in _closed_folders().items():  # outer first: an inner one is then found through the outer
            _open_for_others(folder, mode)
        os.chdir(os.getcwd())  # the working folder found again through what was opened (it may be one of them)
        home = "/root/.autograder-host-user"  # in the folder just mounted: gone with the launcher
        os.mkdir(home)
        os.chown(home, USER_ID, USER_ID)
        _become_user(home)
    else:
        _drop_sys_admin()
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")
    failed = seccomp.install(denied_names=DOCKER_DENIED, sandbox=False,
                             unsupported=LANDLOCK if args.host == "nolandlock" else ())
    if failed:
        raise SystemExit(f"could not install the host's seccomp filter: {failed}")
    os.execvp(argv[0], argv)
    return 127


if __name__ == "__main__":
    sys.exit(main())
