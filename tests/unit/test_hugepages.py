"""The zygote's memory in huge pages: which mappings are collapsed, and that a collapsed chunk forks and
reads back as it was."""

from __future__ import annotations

import ctypes
import mmap
import os

import pytest

from autograder.isolation import hugepages

MiB = 2**20
MAPS = """\
55d0c0000000-55d0c0400000 rw-p 00000000 00:00 0                          [heap]
7f0000100000-7f0000700000 rw-p 00000000 00:00 0
7f0001000000-7f0001400000 rw-p 00001000 08:01 1234                       /usr/lib/libtorch_cpu.so
7f0002000000-7f0002400000 r--p 00000000 00:00 0
7f0003000000-7f0003400000 rw-s 00000000 00:05 99                         /dev/zero (deleted)
7ffc00000000-7ffc00400000 rw-p 00000000 00:00 0                          [stack]
"""


def test_only_the_heap_and_unnamed_private_writable_mappings_in_whole_aligned_chunks():
    found = hugepages.chunks(MAPS)
    heap = [0x55D0C0000000, 0x55D0C0000000 + 2 * MiB]
    unnamed = [0x7F0000200000, 0x7F0000400000]  # 1 MiB to 7 MiB: the aligned 2 to 6 MiB, two chunks
    assert found == heap + unnamed


def test_a_memory_limit_below_the_floor_collapses_nothing():
    assert hugepages.worth_collapsing(None)
    assert hugepages.worth_collapsing(hugepages.MIN_MEMORY_BYTES)
    assert not hugepages.worth_collapsing(768 * 10**6)  # Gradescope's


def _anon_huge_kib() -> int:
    with open("/proc/self/smaps_rollup") as rollup:
        return next(int(line.split()[1]) for line in rollup if line.startswith("AnonHugePages:"))


def test_a_collapsed_chunk_keeps_its_bytes_and_forks():
    region = mmap.mmap(-1, 4 * MiB, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    pattern = bytes(range(256)) * (4 * MiB // 256)
    region[:] = pattern
    start = ctypes.addressof(ctypes.c_char.from_buffer(region))
    chunk = -(-start // hugepages.CHUNK_BYTES) * hugepages.CHUNK_BYTES
    before = _anon_huge_kib()
    hugepages.collapse(chunk)  # where the kernel cannot, nothing changes: the bytes must hold either way
    collapsed = _anon_huge_kib() > before
    pid = os.fork()
    if pid == 0:
        os._exit(0 if region[:] == pattern else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    assert region[:] == pattern
    if not collapsed:
        pytest.skip("this kernel collapsed nothing (no MADV_COLLAPSE, or huge pages off)")
