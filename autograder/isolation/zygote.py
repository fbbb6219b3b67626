"""The zygote: a process that forks a confined sandbox for every request.

`python -m autograder.isolation.zygote FD` reads its configuration (JSON) on stdin, then serves
fork requests on the socket FD (see `sandbox.Zygote`) and on every further socket attached
through it (one per grading worker of the run). A run's first zygote is instead forked by the
workers' parent (`pool.parent`) as soon as that has imported torch, before it imports anything
else, and is sent the same configuration (`run`). The zygote imports torch and what the
assignment's setup cells import, once, so that every fork starts warm; it never imports the
reference or the graders, and its environment holds no secret (a fork can read its parent's
memory and environment).

Before it serves, one throwaway sandbox reports what isolation this machine allows; the zygote
says so in its first message. Whether the view leaks anything is for the grader to find out: it
probes a fresh sandbox itself (`sandbox.Zygote.wait_ready`). The zygote is told only what every
sandbox may know (limits, the view, the public helpers): a sandbox inherits its memory.
"""

from __future__ import annotations

import dataclasses
import gc
import importlib
import json
import os
import selectors
import shutil
import socket
import struct
import sys
import tempfile
from typing import cast

from . import cgroups, confinement, frames, identity, inside
from .forked import answer_of_child
from .limits import SandboxConfig
from .protocol import ATTACH, SPAWN
from .weakness import Gap, Weakness


def main(fd: int) -> None:
    """A zygote in an interpreter of its own: its configuration on stdin."""
    run(fd, sys.stdin.buffer.read())


def run(fd: int, configuration: bytes) -> None:
    """Serve the control socket `fd` (also in a process forked, once torch was imported, from the workers'
    parent before it imported anything else: see pool.parent)."""
    confinement.die_with_parent()
    config = SandboxConfig.from_json(json.loads(configuration))
    real_root = os.geteuid() == 0  # before a user namespace may make this process root of its own
    pid_namespace = identity.pid_namespace()  # what sandboxes' pids are counted in (see identity): this one
    # where the cgroup tree is writable, as root or not; elsewhere (a container's read-only cgroup file system)
    # that is normal: the first line of the run says so, and no warning does
    tree, no_cgroup = cgroups.create(cgroups.tree_name())
    mode = confinement.enter_zygote_namespaces(fd, afterwards=lambda: cgroups.remove_tree(tree) if tree else None)
    control = socket.socket(fileno=fd)
    own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if mode else -1
    scratch_root = None if mode else tempfile.mkdtemp(prefix="autograder-")  # no private /tmp: here
    if scratch_root:
        os.chmod(scratch_root, 0o711)
    host = confinement.Host(mode=mode, real_root=real_root, pid_namespace=pid_namespace, cgroups=tree,
                            scratch_root=scratch_root)
    try:
        _preload(config)
        config = dataclasses.replace(config, fonts={})  # read once: no sandbox needs them
        gc.freeze()  # what every sandbox inherits: no collection in one of them copies its pages
        drop_root, found = _probe(config, host, own_pid_ns)
        host = dataclasses.replace(host, drop_root=drop_root)
        facts = {"weaknesses": [weakness.text for weakness in found],  # for the instructor, from here on
                 "isolation": _isolation(mode, drop_root, found, no_cgroup, host.real_root)}
        try:
            frames.send_frame(control, json.dumps(facts).encode())
        except (BrokenPipeError, ConnectionResetError):
            return  # the owner left before it needed a sandbox (a run with nothing left to grade)
        _serve(control, config, host, own_pid_ns)
    finally:
        if scratch_root:
            shutil.rmtree(scratch_root, ignore_errors=True)


def _isolation(mode: str, drop_root: str, weaknesses: list[Weakness], no_cgroup: str, root: bool) -> str:
    """What confines each sandbox on this machine, in a sentence for the first lines of a run (`no_cgroup`:
    why sandboxes get no cgroup of their own, "" when they do)."""
    gaps = {weakness.gap for weakness in weaknesses}
    if mode and Gap.NAMESPACES not in gaps:
        how = "namespaces: each sandbox is pid 1 of its own PID namespace, with its own mount, network and IPC " \
              "namespaces and an allow-list file system"
    elif Gap.NO_LANDLOCK not in gaps:
        how = "Landlock (no namespaces on this host): each sandbox sees an allow-list of the file system, and may " \
              "not connect over TCP nor signal or reach processes outside it"
    else:
        return "none: this host allows neither namespaces nor Landlock, so sandboxes could read the graders"
    who = {"uid": "a uid of its own", "fsuid": "a uid of its own (files opened as their owner would, within the "
           "allow-list)", "": "uid 0" if root else "your uid"}[drop_root]
    return (f"{how}; {who}, no capabilities, a seccomp filter, limits on time, memory, files and processes"
            + (f"; no cgroup each ({no_cgroup}): a busy submission's processes share the CPU with the others'"
               if no_cgroup else "; a cgroup each"))


def _preload(config: SandboxConfig) -> None:
    """Import torch and what the setup cells import (the public helpers among them, from a
    private copy; matplotlib with the owner's font list, where it gave one), so that no sandbox
    pays for it again."""
    import torch  # noqa: F401

    from . import server  # noqa: F401

    helpers = tempfile.mkdtemp(prefix="autograder-helpers-")
    os.environ["MPLCONFIGDIR"] = helpers  # matplotlib's font list: the owner's copy, or built here; gone with it
    os.environ["MPLBACKEND"] = "Agg"
    for name, data in [*config.fonts.items(), *config.public.items()]:
        with open(os.path.join(helpers, name), "wb") as fh:
            fh.write(data)
    sys.path.insert(0, helpers)
    try:
        for module in config.preload:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001 - a setup cell's import that fails here fails in the sandbox too
                pass
    finally:
        sys.path.remove(helpers)
        shutil.rmtree(helpers, ignore_errors=True)


def _serve(control: socket.socket, config: SandboxConfig, host: confinement.Host, own_pid_ns: int) -> None:
    """Fork a sandbox for every request, on every attached line, until the owner's line closes."""
    lines = selectors.DefaultSelector()
    lines.register(control, selectors.EVENT_READ)
    names: dict[int, str] = {}  # pid -> its cgroup
    pending: set[str] = set()  # cgroups of sandboxes that have ended, still to remove
    count = 0
    while True:
        for key, _ in lines.select():
            line = cast(socket.socket, key.fileobj)  # every line registered is a socket
            try:
                message, fds, _, _ = socket.recv_fds(line, 16, 1)
            except OSError:
                message, fds = b"", []
            if not message or not fds:
                if line is control:
                    return
                lines.unregister(line)
                line.close()
                continue
            if message == ATTACH:
                lines.register(socket.socket(fileno=fds[0]), selectors.EVENT_READ)
                continue
            if message != SPAWN:
                os.close(fds[0])
                continue
            count += 1
            name = f"sandbox-{count}"
            pid = _fork_one(line, fds[0], config, host, name, own_pid_ns, lines)
            if pid is not None:
                names[pid] = name
            _reap(names, pending, host.cgroups)


def _fork_one(line: socket.socket, fd: int, config: SandboxConfig, host: confinement.Host, name: str, own_pid_ns: int,
              lines: selectors.BaseSelector) -> int | None:
    """Fork a sandbox that serves `fd`; tell `line` its pid and pidfd."""
    try:
        pid = confinement.fork_sandbox(host.mode, own_pid_ns)
    except OSError:
        os.close(fd)
        socket.send_fds(line, [struct.pack("<q", -1)], [])
        return None
    if pid == 0:
        for key in list(lines.get_map().values()):
            cast(socket.socket, key.fileobj).close()  # every line registered is a socket
        try:
            inside.serve(socket.socket(fileno=fd), config, host, name)
        finally:
            os._exit(0)
    os.close(fd)
    pidfd = os.pidfd_open(pid)  # before any reaping, so the pid cannot have been reused
    socket.send_fds(line, [struct.pack("<q", 0 if host.mode else pid)], [pidfd])
    os.close(pidfd)
    return pid


def _reap(names: dict[int, str], pending: set[str], tree: dict | None) -> None:
    """Collect ended sandboxes and remove their cgroups (one still emptying waits for the next time)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        if pid in names:
            pending.add(names.pop(pid))
    if tree is not None:
        pending -= {name for name in pending if cgroups.remove(tree, name)}


def _probe(config: SandboxConfig, host: confinement.Host, own_pid_ns: int) -> tuple[str, list[Weakness]]:
    """Set up one throwaway sandbox and see what held.

    Returns how sandboxes leave root (see `confinement.confine`: "uid" where another uid can still
    read Python, "fsuid" where it cannot, "" when not root or no uid can be taken) and what is weaker
    than full isolation, in words for the instructor."""
    def probe(keep_fd: int) -> bytes:
        trial = dataclasses.replace(host, drop_root="uid" if host.real_root else "")
        weaknesses = confinement.confine(config, trial, "sandbox-probe", keep_fd=keep_fd)
        torch_file = sys.modules["torch"].__file__
        assert torch_file is not None  # torch is a package of files
        readable = confinement.readable_by_others([os.__file__, torch_file])
        if os.path.exists("/dev/nvidiactl") and not os.access("/dev/nvidiactl", os.R_OK | os.W_OK):
            weaknesses.append(Weakness(Gap.GPU, "sandboxes cannot open the GPU (/dev/nvidiactl), so CUDA checks "
                                                "will fail"))
        return json.dumps({"weaknesses": [w.to_json() for w in weaknesses], "readable": readable}).encode()

    data = answer_of_child(lambda: confinement.fork_sandbox(host.mode, own_pid_ns), probe)
    if host.cgroups is not None:
        cgroups.remove(host.cgroups, "sandbox-probe")
    try:
        result = json.loads(data)
        weaknesses = [Weakness.from_json(found) for found in result["weaknesses"]]
    except (ValueError, TypeError, KeyError):
        return "", [Weakness(Gap.VIEW, "the sandbox could not set itself up")]
    if not host.real_root or any(weakness.gap is Gap.UID for weakness in weaknesses):
        return "", weaknesses
    return ("uid" if result["readable"] else "fsuid"), weaknesses


if __name__ == "__main__":
    main(int(sys.argv[1]))
