"""What stops a process the workers' parent forked (the zygote, a grading worker) is said on the run's
standard error: it ends with os._exit, which would otherwise lose the exception (a zygote that died at
start once left the run only "Connection reset by peer")."""

from __future__ import annotations

import os
import signal
import socket

from autograder.pool import parent


def _fork_and_wait(child) -> int:
    ours, theirs = socket.socketpair()
    try:
        pid = parent._fork(theirs, signal.SIG_DFL, child, [])
    finally:
        ours.close()
        theirs.close()
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_child_that_raises_says_why_and_ends_with_status_1(capfd):
    def child():
        raise ValueError("the cgroup tree is read-only")

    assert _fork_and_wait(child) == 1
    err = capfd.readouterr().err
    assert "Traceback" in err and "ValueError: the cgroup tree is read-only" in err


def test_a_child_that_returns_ends_quietly_with_status_0(capfd):
    assert _fork_and_wait(lambda: None) == 0
    assert capfd.readouterr().err == ""
