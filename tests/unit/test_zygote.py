"""The zygote's request loop (autograder/isolation/zygote.py): a sandbox forked for each spawn request and
told on the line that asked, attached lines served beside the owner's, junk and broken lines costing only
themselves, and the loop's end when the owner leaves. The sandbox's own confinement is stubbed out: a
forked child that says its name stands for it."""

from __future__ import annotations

import os
import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from autograder.isolation import confinement, inside, zygote
from autograder.isolation.limits import Limits, SandboxConfig
from autograder.isolation.policy import View
from autograder.isolation.protocol import ATTACH, SPAWN
from autograder.isolation.weakness import Gap, Weakness

WAIT = 30.0  # seconds any one answer may take on a loaded machine; every wait here ends on an event
CONFIG = SandboxConfig(Limits(), View((), (), ()))  # what the stubbed sandboxes are given (they use none of it)


def _host(mode: str) -> confinement.Host:
    """A machine where the zygote has the privilege `mode` and no cgroup tree."""
    return confinement.Host(mode=mode, real_root=False, pid_namespace=0, cgroups=None, scratch_root=None)


def _says_its_name(sock: socket.socket, config: object, host: confinement.Host, name: str) -> None:
    """Stands for inside.serve in a forked sandbox: says the name the zygote gave it, then lives on until its
    asker says it may go (so that its pid is still its own while the test looks at it). Not until the asker
    closes its end: the child holds a copy of that end too, forked with the rest of this process's fds."""
    sock.settimeout(WAIT)
    sock.sendall(name.encode())
    try:
        sock.recv(1)
    except OSError:
        pass


@pytest.fixture
def stubbed(monkeypatch) -> None:
    """Sandboxes forked plainly (no namespaces) that only say their name."""
    monkeypatch.setattr(confinement, "fork_sandbox", lambda mode, own_pid_ns: os.fork())
    monkeypatch.setattr(inside, "serve", _says_its_name)


@pytest.fixture
def owner(stubbed) -> Iterator[tuple[socket.socket, threading.Thread]]:
    """The owner's line to a zygote loop serving in a thread of this process; the loop must end with it."""
    ours, theirs = socket.socketpair()
    ours.settimeout(WAIT)
    loop = threading.Thread(target=zygote._serve, args=(theirs, CONFIG, _host(""), -1), daemon=True)
    loop.start()
    try:
        yield ours, loop
    finally:
        ours.close()
        loop.join(WAIT)
        theirs.close()


def _spawn(line: socket.socket) -> tuple[int, list[int], socket.socket]:
    """Ask for a sandbox on `line`: the pid told, the fds that came with it, and our end of its socket."""
    ours, theirs = socket.socketpair()
    ours.settimeout(WAIT)
    socket.send_fds(line, [SPAWN], [theirs.fileno()])
    theirs.close()
    reply, fds, _, _ = socket.recv_fds(line, 8, 1)
    assert len(reply) == 8, reply
    return struct.unpack("<q", reply)[0], fds, ours


def _closed_by_the_zygote(sock: socket.socket) -> bool:
    """Whether the other end of `sock` is closed: recv gives b"" at once, rather than waiting for data."""
    sock.settimeout(WAIT)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False


def _pidfd_of(fd: int) -> int:
    """The pid a pidfd stands for, as the kernel lists it (its "Pid:" line), so the fd is shown to be that one."""
    with open(f"/proc/self/fdinfo/{fd}") as info:
        return int(next(line.split()[1] for line in info if line.startswith("Pid:")))


def _ended(pid: int, pidfd: int, sandbox: socket.socket) -> None:
    """End a stubbed sandbox (a byte on its socket), wait for it (unless the loop reaped it already), and
    close its pidfd."""
    sandbox.sendall(b".")
    sandbox.close()
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    os.close(pidfd)


def test_a_spawn_request_forks_a_named_sandbox_and_tells_its_pid_and_pidfd(owner):
    line, _ = owner
    pid, fds, sandbox = _spawn(line)
    assert sandbox.recv(64) == b"sandbox-1"
    assert pid > 0 and len(fds) == 1 and _pidfd_of(fds[0]) == pid
    _ended(pid, fds[0], sandbox)
    second, fds, sandbox = _spawn(line)
    assert second != pid and sandbox.recv(64) == b"sandbox-2"
    _ended(second, fds[0], sandbox)


def test_an_attached_line_is_answered_on_itself(owner):
    line, _ = owner
    worker, theirs = socket.socketpair()
    worker.settimeout(WAIT)
    socket.send_fds(line, [ATTACH], [theirs.fileno()])
    theirs.close()
    pid, fds, sandbox = _spawn(worker)
    assert sandbox.recv(64) == b"sandbox-1"
    _ended(pid, fds[0], sandbox)
    pid, fds, sandbox = _spawn(line)  # the owner's line is served as before
    assert sandbox.recv(64) == b"sandbox-2"
    _ended(pid, fds[0], sandbox)
    worker.close()


def test_a_request_of_no_known_kind_is_dropped_with_its_socket(owner):
    line, _ = owner
    ours, theirs = socket.socketpair()
    socket.send_fds(line, [b"fork bomb"], [theirs.fileno()])
    theirs.close()
    assert _closed_by_the_zygote(ours)  # the zygote closed the one copy left: no sandbox serves it
    pid, fds, sandbox = _spawn(line)
    assert sandbox.recv(64) == b"sandbox-1"  # no sandbox was counted for it
    _ended(pid, fds[0], sandbox)


def test_a_line_that_sends_no_socket_is_closed_and_the_others_still_served(owner):
    line, _ = owner
    worker, theirs = socket.socketpair()
    socket.send_fds(line, [ATTACH], [theirs.fileno()])
    theirs.close()
    worker.sendall(SPAWN)  # a spawn request without the socket the sandbox would serve
    assert _closed_by_the_zygote(worker)
    pid, fds, sandbox = _spawn(line)
    assert sandbox.recv(64) == b"sandbox-1"
    _ended(pid, fds[0], sandbox)


def test_the_loop_ends_when_the_owner_leaves_though_a_worker_is_still_attached(owner):
    line, loop = owner
    worker, theirs = socket.socketpair()
    socket.send_fds(line, [ATTACH], [theirs.fileno()])
    theirs.close()
    line.close()
    loop.join(WAIT)
    assert not loop.is_alive()
    worker.close()


def test_a_sandbox_that_cannot_be_forked_is_told_as_pid_minus_one_and_its_socket_closed(stubbed, monkeypatch):
    def no_fork(mode: str, own_pid_ns: int) -> int:
        raise OSError("fork failed")

    monkeypatch.setattr(confinement, "fork_sandbox", no_fork)
    line, asked = socket.socketpair()
    ours, theirs = socket.socketpair()
    try:
        assert zygote._fork_one(asked, theirs.detach(), CONFIG, _host(""), "sandbox-1", -1, None) is None
        reply, fds, _, _ = socket.recv_fds(line, 8, 1)
        assert struct.unpack("<q", reply) == (-1,) and fds == []
        assert _closed_by_the_zygote(ours)
    finally:
        for sock in (line, asked, ours):
            sock.close()


def test_within_a_pid_namespace_the_pid_is_not_told_but_the_pidfd_is(stubbed):
    """A sandbox in a PID namespace of its own is pid 1 there: its host pid means nothing to the asker."""
    line, asked = socket.socketpair()
    ours, theirs = socket.socketpair()
    ours.settimeout(WAIT)
    try:
        pid = zygote._fork_one(asked, theirs.detach(), CONFIG, _host("namespaces"), "sandbox-7", -1,
                               zygote.selectors.DefaultSelector())
        reply, fds, _, _ = socket.recv_fds(line, 8, 1)
        assert struct.unpack("<q", reply) == (0,) and len(fds) == 1 and _pidfd_of(fds[0]) == pid
        assert ours.recv(64) == b"sandbox-7"
        _ended(pid, fds[0], ours)
    finally:
        for sock in (line, asked, ours):
            sock.close()


@pytest.mark.parametrize("mode, weaknesses, says", [
    ("namespaces", [], "namespaces: each sandbox is pid 1"),
    ("namespaces", [Weakness(Gap.VIEW, "no private /dev/shm")], "namespaces: each sandbox is pid 1"),
    ("namespaces", [Weakness(Gap.NAMESPACES, "no mount namespace")], "Landlock (no namespaces on this host)"),
    ("", [], "Landlock (no namespaces on this host)"),
    ("", [Weakness(Gap.LANDLOCK, "Landlock without network rules")], "Landlock (no namespaces on this host)"),
    ("", [Weakness(Gap.NO_LANDLOCK, "no Landlock (kernel older than 5.13, or disabled)")], "none: "),
    # the words decide nothing: a sentence naming namespaces, of another kind, changes no verdict
    ("namespaces", [Weakness(Gap.LIMITS, "no namespace for this, no private file system for that")],
     "namespaces: each sandbox is pid 1"),
])
def test_the_isolation_sentence_names_what_confines_each_sandbox(mode, weaknesses, says):
    sentence = zygote._isolation(mode, "uid", weaknesses, "", True)
    assert sentence.startswith(says)
    if not says.startswith("none"):
        assert "a uid of its own" in sentence and sentence.endswith("; a cgroup each")
