"""isolation.held: what a call uses is counted wherever its memory was first allocated, and a call beside another
process that runs, or one that starts or ends, is not measured. Each case forks a 'sandbox' (a process that may
fork a child of its own) and measures a 'call' there as the grader would, from this process."""

from __future__ import annotations

import mmap
import os
import sys

import pytest

from autograder.isolation.held import NOT_MEASURED, MemoryUse

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel's counts under /proc")

MIB = 2**20
INHERITED = bytearray(16 * MIB)  # allocated (and touched) here, before any fork: what a loaded module keeps


def _measure(call, *, before=None, other=None) -> int | str:
    """MemoryUse of `call()` run in a forked child: `before()` runs there first, outside the window (as a
    hijacked harness would), and `other()` in a second child that runs all along, if given."""
    go_read, go_write = os.pipe()
    done_read, done_write = os.pipe()
    ready_read, ready_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            if other is not None and os.fork() == 0:
                other()
                os._exit(0)
            if before is not None:
                before()
            os.write(ready_write, b"r")
            os.read(go_read, 1)
            call()
            os.write(done_write, b"d")
            os.read(go_read, 1)  # alive until measured
        finally:
            os._exit(0)
    os.read(ready_read, 1)
    use = MemoryUse(pid, pid, [])
    os.write(go_write, b"g")
    os.read(done_read, 1)
    used = use.bytes()
    os.write(go_write, b"g")
    os.waitpid(pid, 0)
    for fd in (go_read, go_write, done_read, done_write, ready_read, ready_write):
        os.close(fd)
    return used


def _write_pages(buffer, size: int) -> None:
    for i in range(0, size, 4096):
        buffer[i] = 1


def test_new_memory_counts():
    assert 8 * MIB <= _measure(lambda: _write_pages(bytearray(8 * MIB), 8 * MIB)) < 12 * MIB


def test_memory_inherited_and_written_counts_as_much_as_new():
    """A workspace the process was forked with (from import, or kept from a warm-up) is copied page by page."""
    used = _measure(lambda: _write_pages(INHERITED, len(INHERITED)))
    assert 16 * MIB <= used < 20 * MIB


def test_memory_inherited_and_only_read_does_not():
    assert _measure(lambda: sum(INHERITED[::4096])) < 4 * MIB


def test_memory_touched_before_the_call_counts():
    kept = []
    used = _measure(lambda: _write_pages(kept[0], 8 * MIB), before=lambda: kept.append(bytearray(8 * MIB)))
    assert used >= 8 * MIB


def test_bytes_written_through_system_calls_count():
    def to_a_pipe():
        read, write = os.pipe()
        os.set_blocking(write, False)
        written = 0
        try:
            while written < 4 * MIB:
                written += os.write(write, b"x" * 65536)
        except BlockingIOError:  # the pipe is full: what it holds was written
            pass
        assert written > 0

    assert _measure(to_a_pipe) >= 64 * 1024


def test_shared_memory_counts_at_its_whole_size():
    shared = mmap.mmap(-1, 24 * MIB)  # mapped before the fork: the child has it without its pages
    try:
        assert _measure(lambda: shared.__setitem__(0, 1)) >= 24 * MIB
    finally:
        shared.close()


def test_another_process_that_runs_during_the_call_is_not_measured():
    def busy():
        for _ in range(10**8):
            pass

    used = _measure(lambda: sum(range(10**6)), other=busy)
    assert isinstance(used, str) and used.startswith(NOT_MEASURED) and "ran during the call" in used


def test_a_process_started_during_the_call_is_not_measured():
    def starts_one():
        if os.fork() == 0:
            os._exit(0)

    used = _measure(starts_one)
    assert isinstance(used, str) and "started or ended processes" in used


def test_a_process_started_and_collected_during_the_call_is_not_measured():
    def starts_and_reaps_one():
        child = os.fork()
        if child == 0:
            os._exit(0)  # quicker than the kernel's clock tick: only its page faults show
        os.waitpid(child, 0)

    used = _measure(starts_and_reaps_one)
    assert isinstance(used, str) and "started or ended processes" in used
