"""The seccomp filter: what it denies, and that ordinary work still runs."""

from __future__ import annotations

import ctypes
import errno
import os

import pytest

from autograder.isolation import seccomp

pytestmark = pytest.mark.skipif(os.uname().machine not in seccomp.SYSCALL_NUMBERS or not hasattr(os, "fork"),
                                reason="the filter is written for Linux on x86_64 and aarch64")


def test_the_program_jumps_stay_inside_it():
    for machine in seccomp.SYSCALL_NUMBERS:
        code = seccomp.program(machine)
        for i, (op, jt, jf, _) in enumerate(code):
            assert 0 <= jt <= 255 and 0 <= jf <= 255
            if op in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
                assert i + 1 + max(jt, jf) < len(code)
        assert code[-1][0] == seccomp.RET_K


def test_in_a_filtered_process_the_keyring_is_denied_and_threads_still_run():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        results = []
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(38, 1, 0, 0, 0)  # no_new_privs, as a sandbox sets it first
            results.append(seccomp.install() == [])
            numbers = seccomp.SYSCALL_NUMBERS[os.uname().machine]
            results.append(libc.syscall(numbers["add_key"], b"user", b"k", b"v", 1, -3) == -1
                           and ctypes.get_errno() == errno.EPERM)
            results.append(libc.syscall(numbers["keyctl"], 0, 0) == -1 and ctypes.get_errno() == errno.EPERM)
            results.append(libc.unshare(0x10000000) == -1 and ctypes.get_errno() == errno.EPERM)
            import socket

            try:
                socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                results.append(False)
            except PermissionError:
                results.append(True)
            pair = socket.socketpair()
            results.append(socket.socket(socket.AF_UNIX).fileno() >= 0 and pair[0].send(b"x") == 1)
            results.append(libc.shmget(0, 4096, 0o1600) == -1 and ctypes.get_errno() == errno.EPERM)
            results.append(libc.setsid() == -1 and ctypes.get_errno() == errno.EPERM)
            import subprocess
            import threading

            box = []
            thread = threading.Thread(target=lambda: box.append(1))
            thread.start()
            thread.join()
            results.append(box == [1])
            results.append(subprocess.run(["true"]).returncode == 0)
        finally:
            os.write(write, bytes(int(r) for r in results))
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        got = list(pipe.read())
    os.waitpid(pid, 0)
    assert got == [1] * 10
