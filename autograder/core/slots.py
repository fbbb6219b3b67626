"""CPU slots: at most N grading workers compute at once, while a worker whose check only waits on the
clock (the timing part's synthetic workloads) lets another compute. So a run can keep more workers
than cores busy without two computations ever sharing a core.

A slot is an exclusive lock (flock) on one of N memory files that the run creates; each worker opens
them afresh through /proc, so each holds its own lock, which the kernel frees when the worker dies.
"""

from __future__ import annotations

import fcntl
import os
import time

POLL_SECONDS = 0.002


class CpuSlots:
    """The slots as one worker sees them."""

    def __init__(self, fds: list[int]):
        self._files = [os.open(f"/proc/self/fd/{fd}", os.O_RDWR | os.O_CLOEXEC) for fd in fds]
        self._held: int | None = None

    @staticmethod
    def create(count: int) -> list[int]:
        """`count` slot files for a run; pass their descriptors to the workers (`pass_fds`)."""
        return [os.memfd_create(f"autograder-cpu-slot-{i}", 0) for i in range(count)]

    def acquire(self) -> None:
        """Wait for a free slot (no-op when one is held)."""
        while self._held is None:
            for i, fd in enumerate(self._files):
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                self._held = i
                return
            time.sleep(POLL_SECONDS)

    def release(self) -> None:
        if self._held is not None:
            fcntl.flock(self._files[self._held], fcntl.LOCK_UN)
            self._held = None
