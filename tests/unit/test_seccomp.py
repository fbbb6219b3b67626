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
            for make in (lambda: socket.socket(socket.AF_UNIX), socket.socketpair):  # a queue no fault shows
                try:
                    make()
                    results.append(False)
                except PermissionError:
                    results.append(True)
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
    assert got == [1] * 11


def _filtered(check, **choices) -> list[int]:
    """What `check()` (a list of booleans) says in a child process under the filter of `choices`."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        results = []
        try:
            ctypes.CDLL(None).prctl(38, 1, 0, 0, 0)
            results = [seccomp.install(**choices) == [], *check()]
        finally:
            os.write(write, bytes(int(r) for r in results))
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        got = list(pipe.read())
    os.waitpid(pid, 0)
    return got


def _memory_rules() -> list[bool]:
    import mmap
    import tempfile

    libc = ctypes.CDLL(None, use_errno=True)
    results = [libc.prctl(seccomp.PR_SET_THP_DISABLE, 0, 0, 0, 0) == -1 and ctypes.get_errno() == errno.EPERM]
    try:
        os.memfd_create("store")
        results.append(False)
    except PermissionError:
        results.append(True)
    with tempfile.TemporaryFile() as file:
        file.write(b"\0" * 8192)
        file.flush()
        try:
            mmap.mmap(file.fileno(), 8192, flags=mmap.MAP_SHARED)
            results.append(False)
        except PermissionError:
            results.append(True)
        private = mmap.mmap(file.fileno(), 8192, flags=mmap.MAP_PRIVATE)  # written pages are copies: faults
        private[0] = 1
        results.append(private[0] == 1)
    shared = mmap.mmap(-1, 8192, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)  # fresh pages: a fault each
    shared[0] = 1
    results.append(shared[0] == 1)
    return results


def test_memory_stays_where_page_faults_count_it():
    """No THP turned back on, no memfd, no file mapped shared; private file mappings and shared anonymous
    memory (whose pages each fault when first touched) still work."""
    assert _filtered(_memory_rules) == [1] * 6


def test_a_sandbox_that_may_start_cuda_maps_files_shared():
    def shared_file() -> list[bool]:
        import mmap
        import tempfile

        with tempfile.TemporaryFile() as file:
            file.write(b"\0" * 8192)
            file.flush()
            return [mmap.mmap(file.fileno(), 8192, flags=mmap.MAP_SHARED)[0] == 0]

    assert _filtered(shared_file, shared_files=True) == [1, 1]
