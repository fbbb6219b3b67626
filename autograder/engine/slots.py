"""CPU slots: at most N grading workers compute at once, while a worker whose check only waits on the
clock (the timing part's synthetic workloads) lets another compute. So a run can keep more workers
than cores busy without two computations ever sharing a core.

A slot is an exclusive lock (flock) on one of N memory files that the run creates; each worker opens
them afresh through /proc, so each holds its own lock, which the kernel frees when the worker dies.
Workers waiting for a slot queue at one more file, the gate, in a blocking lock that costs no CPU:
only the first in line looks at the slots until one is free (rather than every waiter looking, every
2 ms).
"""

from __future__ import annotations

import fcntl
import os
import time

POLL_SECONDS = 0.002


def usable_cpus() -> int:
    """The cores this process may use: its CPU affinity, and no more than its cgroup's CPU quota (a
    container's `--cpus`, Gradescope's half a CPU counts as one), at least one."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    quota = _cgroup_quota()
    return max(1, min(cores, int(quota + 0.999) if quota else cores))


def _cgroup_quota() -> float | None:
    """This process's cgroup CPU quota in cores (v2 cpu.max, or v1 cpu.cfs_quota_us), None when unlimited or unknown."""
    try:
        for line in open("/proc/self/cgroup").read().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers == "":
                quota, period = open(f"/sys/fs/cgroup{path}/cpu.max").read().split()
                return None if quota == "max" else int(quota) / int(period)
            if "cpu" in controllers.split(","):
                base = next(f"/sys/fs/cgroup/{c}" for c in ("cpu,cpuacct", "cpu") if os.path.isdir(f"/sys/fs/cgroup/{c}"))
                quota_us = int(open(f"{base}{path}/cpu.cfs_quota_us").read())
                period_us = int(open(f"{base}{path}/cpu.cfs_period_us").read())
                return None if quota_us <= 0 else quota_us / period_us
    except (OSError, ValueError, StopIteration):
        return None
    return None


class CpuSlots:
    """The slots as one worker sees them (the run's files: the gate's, then one per slot)."""

    def __init__(self, fds: list[int]):
        files = [os.open(f"/proc/self/fd/{fd}", os.O_RDWR | os.O_CLOEXEC) for fd in fds]
        self._gate, self._files = files[0], files[1:]
        self._held: int | None = None

    @staticmethod
    def create(count: int) -> list[int]:
        """The gate's file and `count` slot files for a run; pass their descriptors to the workers (`pass_fds`)."""
        return [os.memfd_create("autograder-cpu-gate", 0)] + \
            [os.memfd_create(f"autograder-cpu-slot-{i}", 0) for i in range(count)]

    def acquire(self) -> None:
        """Wait for a free slot (no-op when one is held): in line at the gate, then, first in line, looking."""
        if self._held is not None:
            return
        fcntl.flock(self._gate, fcntl.LOCK_EX)
        try:
            while self._held is None:
                for i, fd in enumerate(self._files):
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue
                    self._held = i
                    break
                else:
                    time.sleep(POLL_SECONDS)
        finally:
            fcntl.flock(self._gate, fcntl.LOCK_UN)

    def release(self) -> None:
        if self._held is not None:
            fcntl.flock(self._files[self._held], fcntl.LOCK_UN)
            self._held = None
