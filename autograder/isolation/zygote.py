"""The zygote: a fresh interpreter that forks a confined sandbox for every request.

`python -m autograder.isolation.zygote FD` reads its configuration (JSON) on stdin, then serves
fork requests on the socket FD (see `sandbox.Zygote`) and on every further socket attached
through it (one per grading worker of the run). It imports torch and
what the assignment's setup cells import, once, so that every fork starts warm; it never
imports the reference or the graders, and its environment holds no secret (a fork can read
its parent's memory and environment).

Before it serves, one throwaway sandbox reports what isolation this machine allows and
whether the policy's view leaks anything; the zygote says so in its first message.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import selectors
import shutil
import socket
import struct
import sys
import tempfile

from . import cgroups, confinement, frames, policy, protocol
from .protocol import ATTACH, SPAWN


def main(fd: int) -> None:
    confinement.die_with_parent()
    config = json.loads(sys.stdin.buffer.read())
    config["public"] = {name: base64.b64decode(data) for name, data in config["public"].items()}
    config["real_root"] = os.geteuid() == 0
    weaknesses: list[str] = []
    tree = None
    if config["real_root"]:
        tree, why = cgroups.create(f"autograder-{os.getpid()}")
        weaknesses += [why] if why else []
    config["cgroups"] = tree
    mode = confinement.enter_zygote_namespaces(fd, afterwards=lambda: tree and cgroups.remove_tree(tree))
    config["mode"] = mode
    config["view"] = policy.sandbox_view(config["secrets"])
    control = socket.socket(fileno=fd)
    own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY) if mode else -1
    config["scratch_root"] = None if mode else tempfile.mkdtemp(prefix="autograder-")  # no private /tmp: here
    if config["scratch_root"]:
        os.chmod(config["scratch_root"], 0o711)
    try:
        _preload(config)
        config["drop_root"], found, breaches = _probe(config, own_pid_ns)
        if not mode:
            found.insert(0, "no namespaces (submissions can read the graders and signal your processes)")
        try:
            frames.send_frame(control, json.dumps({"weaknesses": weaknesses + found, "breaches": breaches}).encode())
        except (BrokenPipeError, ConnectionResetError):
            return  # the owner left before it needed a sandbox (a run with nothing left to grade)
        _serve(control, config, own_pid_ns)
    finally:
        if config["scratch_root"]:
            shutil.rmtree(config["scratch_root"], ignore_errors=True)


def _preload(config: dict) -> None:
    """Import torch and what the setup cells import (the public helpers among them, from a
    private copy), so that no sandbox pays for it again."""
    import torch  # noqa: F401

    from . import server  # noqa: F401

    helpers = tempfile.mkdtemp(prefix="autograder-helpers-")
    os.environ["MPLCONFIGDIR"] = helpers  # matplotlib's font cache: built here, gone with the folder
    os.environ["MPLBACKEND"] = "Agg"
    for name, data in config["public"].items():
        with open(os.path.join(helpers, name), "wb") as fh:
            fh.write(data)
    sys.path.insert(0, helpers)
    try:
        for module in config["preload"]:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001 - a setup cell's import that fails here fails in the sandbox too
                pass
    finally:
        sys.path.remove(helpers)
        shutil.rmtree(helpers, ignore_errors=True)


def _serve(control: socket.socket, config: dict, own_pid_ns: int) -> None:
    """Fork a sandbox for every request, on every attached line, until the owner's line closes."""
    lines = selectors.DefaultSelector()
    lines.register(control, selectors.EVENT_READ)
    names: dict[int, str] = {}  # pid -> its cgroup
    pending: set[str] = set()  # cgroups of sandboxes that have ended, still to remove
    count = 0
    while True:
        for key, _ in lines.select():
            line = key.fileobj
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
            config["name"] = f"sandbox-{count}"
            pid = _fork_one(line, fds[0], config, own_pid_ns, lines)
            if pid is not None:
                names[pid] = config["name"]
            _reap(names, pending, config["cgroups"])


def _fork_one(line: socket.socket, fd: int, config: dict, own_pid_ns: int, lines: selectors.BaseSelector) -> int | None:
    """Fork a sandbox that serves `fd`; tell `line` its pid and pidfd."""
    try:
        pid = confinement.fork_sandbox(config["mode"], own_pid_ns)
    except OSError:
        os.close(fd)
        socket.send_fds(line, [struct.pack("<q", -1)], [])
        return None
    if pid == 0:
        for key in list(lines.get_map().values()):
            key.fileobj.close()
        try:
            _sandbox_main(socket.socket(fileno=fd), config)
        finally:
            os._exit(0)
    os.close(fd)
    pidfd = os.pidfd_open(pid)  # before any reaping, so the pid cannot have been reused
    socket.send_fds(line, [struct.pack("<q", 0 if config["mode"] else pid)], [pidfd])
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


def _probe(config: dict, own_pid_ns: int) -> tuple[bool, list[str], list[str]]:
    """Set up one throwaway sandbox and see what held.

    Returns whether sandboxes can drop root (Python is still readable by another uid), what is
    weaker than full isolation, and what of the view leaked, in words for the instructor."""
    read, write = os.pipe()
    config["name"] = "sandbox-probe"
    pid = confinement.fork_sandbox(config["mode"], own_pid_ns)
    if pid == 0:
        try:
            os.close(read)
            weaknesses = confinement.confine(config, drop_root=config["real_root"], keep_fd=write)
            readable = confinement.readable_by_others([os.__file__, sys.modules["torch"].__file__])
            if os.path.exists("/dev/nvidiactl") and not os.access("/dev/nvidiactl", os.R_OK | os.W_OK):
                weaknesses.append("sandboxes cannot open the GPU (/dev/nvidiactl), so CUDA checks will fail")
            breaches = policy.probe(config["view"])
            os.write(write, json.dumps({"weaknesses": weaknesses, "readable": readable, "breaches": breaches}).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    if config["cgroups"] is not None:
        cgroups.remove(config["cgroups"], "sandbox-probe")
    try:
        result = json.loads(data)
    except ValueError:
        return False, ["the sandbox could not set itself up"], ["the sandbox could not set itself up"]
    weaknesses = result["weaknesses"]
    drop_root = config["real_root"] and result["readable"]
    if config["real_root"] and not drop_root and not any("uid of their own" in w for w in weaknesses):
        weaknesses.append("Python is not readable by other users, so sandboxes run as root without capabilities")
    return drop_root, weaknesses, result["breaches"]


def _sandbox_main(sock: socket.socket, config: dict) -> None:
    import torch

    from . import wire

    confinement.confine(config, drop_root=config["drop_root"], keep_fd=sock.fileno())
    torch.set_num_threads(1)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    exposed = config["view"].expose
    sys.path[:] = [os.getcwd()] + [p for p in sys.path if p and any(policy.inside(p, e) for e in exposed)]
    sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
    breaches = policy.probe(config["view"]) if config["probe"] else []
    from .server import Runtime, error_info

    def call_back(message: dict) -> object:
        frames.send_frame(sock, b"C" + wire.encode(message))
        answer = frames.recv_frame(sock)
        reply = wire.decode(answer) if answer is not None else None
        if type(reply) is not dict or not reply.get("ok"):
            raise RuntimeError("the grader did not serve the call")
        return reply.get("value")

    runtime = Runtime(call_back)
    while True:
        request = frames.recv_frame(sock)
        if request is None:
            return
        if breaches:
            reply = wire.encode(protocol.error(protocol.BREACH, "; ".join(breaches)))
        else:
            try:
                reply = wire.encode(runtime.handle(wire.decode(request)))
            except BaseException as exc:  # noqa: BLE001 - whatever the submission did, answer
                reply = wire.encode({"ok": False, "error": error_info(exc)})
        frames.send_frame(sock, b"R" + reply)


if __name__ == "__main__":
    main(int(sys.argv[1]))
