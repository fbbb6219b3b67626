"""Cheaper forks of a torch-sized process: the zygote's anonymous memory in 2 MiB pages.

Every submission's sandbox is a fork of the zygote, and every part a fork of that. Importing torch
leaves some 150 MiB of the zygote's own memory (the heap, Python's arenas) in 4 KiB pages: each fork
copies a page-table entry for every one of them, and each exit takes them down again: together a
tenth of a class's CPU time, in the kernel (`perf record -a`). Collapsed into huge pages
(`MADV_COLLAPSE`, Linux 6.1), a fork copies one entry per 2 MiB, and a sandbox that writes to one
copies only the 4 KiB page it writes (the kernel splits the huge page's mapping for that process
alone). Measured on this machine, a part's fork, one call and its end went from 13 to 9 ms of CPU, a
sandbox's load and first part from 32 to 27 ms.

The collapsed pages are the zygote's own copy (until then it shared them with the workers' parent it
was forked from): some 150 MiB more, so not where the run's memory is limited below
`MIN_MEMORY_BYTES`. Each chunk takes a few milliseconds, so the zygote collapses one at a time while
no request waits. Where the kernel cannot (older, or huge pages off), nothing changes.
"""

from __future__ import annotations

import ctypes

CHUNK_BYTES = 2 * 2**20  # one huge page on x86-64 and on arm64 with 4 KiB pages
MADV_COLLAPSE = 25
MIN_MEMORY_BYTES = 2 * 2**30  # under a cgroup memory limit below this (Gradescope's 768 MB), no copy

_libc = ctypes.CDLL(None)  # madvise is best effort here: its errno is never read
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def chunks(maps: str) -> list[int]:
    """The start of every whole, aligned chunk of the private, writable, anonymous mappings in `maps`
    (the text of /proc/self/maps): the heap and the unnamed mappings, not the stack nor any file's."""
    found: list[int] = []
    for line in maps.splitlines():
        fields = line.split()
        if len(fields) < 5 or not fields[1].startswith("rw") or fields[1][3:4] != "p":
            continue
        if len(fields) > 5 and fields[5] != "[heap]":
            continue
        low, high = (int(address, 16) for address in fields[0].split("-"))
        first = -(-low // CHUNK_BYTES) * CHUNK_BYTES
        found += range(first, high // CHUNK_BYTES * CHUNK_BYTES, CHUNK_BYTES)
    return found


def collapse(start: int) -> None:
    """Collapse the chunk at `start` into a huge page where the kernel can (it cannot some: then the chunk
    stays as it was, as every chunk does on a kernel without MADV_COLLAPSE or with huge pages off)."""
    _libc.madvise(start, CHUNK_BYTES, MADV_COLLAPSE)


def worth_collapsing(memory_limit: int | None) -> bool:
    """Whether the run may spend the memory of a private copy (see the module's docstring)."""
    return memory_limit is None or memory_limit >= MIN_MEMORY_BYTES
