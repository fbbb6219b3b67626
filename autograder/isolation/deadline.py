"""Deadlines that do not charge a submission for a busy machine.

A call's time limit is wall-clock time, but on a machine with more runnable processes than cores a
process also waits for a CPU, and that wait is not its own doing. The kernel counts it for every
process (the run-queue delay, the second field of /proc/PID/schedstat), so a `Deadline` moves later
by what the answering process has waited there since the request was sent. A process that sleeps or
loops on an idle machine gets no more than its limit; one kept off the CPU gets at most `STRETCH`
times its limit in all. The figure comes from the kernel, never from the sandbox.

Sandboxes run torch on one thread, so the waiting of their main thread is the waiting of the call.
Where the kernel keeps no such count (or the process cannot be found), a deadline is a plain one.

The kernel adds a wait to that count only once the process runs again. So a process that is waiting
for a CPU when its deadline comes (runnable, and its CPU time has not moved since the last look) is
looked at again a moment later (`QUEUED_LOOK`), until it runs or the stretch is used up; a process
that loops on an idle machine is running when it is looked at, and gets at most one look more.

A deadline also reads, from the kernel, the CPU time the process used meanwhile (`cpu_used`): a
measure of the work a call did that a busy machine does not lengthen.
"""

from __future__ import annotations

import time

STRETCH = 3.0  # the most a deadline may move: to this many times its limit after the request
QUEUED_LOOK = 0.05  # seconds: how soon a process found waiting for a CPU at its deadline is looked at again


def run_delay(pid: int) -> float | None:
    """Seconds the main thread of `pid` (in this process's PID namespace) has waited, runnable, for a CPU;
    None when it is gone or the kernel does not say."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def runnable(pid: int) -> bool:
    """Whether the main thread of `pid` is running or waiting to run (state R), by /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] == b"R"
    except (OSError, IndexError):
        return False


def cpu_time(pid: int) -> float | None:
    """Seconds that all threads of `pid` (in this process's PID namespace), ended ones included, have run
    on a CPU: the kernel's clock of that process (Linux lets any process read it); None when it is gone."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)  # the process's CPU clock: MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
    except OSError:
        return None


class Deadline:
    """When the reply to a request made now is due: `seconds` from now, plus the time process `pid` has
    waited for a CPU since (none when `pid` is None), up to `STRETCH` times `seconds`. Called, it says
    when that is now (time.monotonic()), as `frames.recv_frame` asks it each time a wait ends; until
    the plain limit has passed, that limit (the kernel's count is read only once it could matter)."""

    def __init__(self, seconds: float, pid: int | None = None):
        self.seconds, self.pid = seconds, pid
        self.start = time.monotonic()
        self._waited_before = run_delay(pid) if pid else None
        self._cpu_before = cpu_time(pid) if pid else None
        self._last_look: tuple[float, float] | None = None  # (when, its CPU time) at the last look past the deadline

    def waited(self) -> float:
        """Seconds the process has waited for a CPU since the request (0 where that is not known)."""
        if self._waited_before is None or self.pid is None:
            return 0.0
        now = run_delay(self.pid)
        return 0.0 if now is None else max(0.0, now - self._waited_before)

    def cpu_used(self) -> float | None:
        """Seconds the process has run on a CPU since the request; None where that is not known."""
        if self._cpu_before is None:  # no pid, or no count at the request
            return None
        now = cpu_time(self.pid)
        return None if now is None else max(0.0, now - self._cpu_before)

    def __call__(self) -> float:
        plain = self.start + self.seconds
        now = time.monotonic()
        if now < plain:  # it can only be later: the caller asks again once this has passed
            return plain
        due = self.start + min(self.seconds + self.waited(), STRETCH * self.seconds)
        if due <= now and self._queued(now):
            return min(now + QUEUED_LOOK, self.start + STRETCH * self.seconds)
        return due

    def _queued(self, now: float) -> bool:
        """Whether the process may be waiting for a CPU now, a wait the kernel has not counted yet: runnable,
        and (after a first look) its CPU time has moved by under a tenth of the time since the last look."""
        if self.pid is None or self._waited_before is None or not runnable(self.pid):
            return False
        cpu = cpu_time(self.pid)
        if cpu is None:
            return False
        last, self._last_look = self._last_look, (now, cpu)
        return last is None or cpu - last[1] < 0.1 * (now - last[0])

    def overrun(self) -> float:
        """Seconds past its limit that the request has lasted so far, which only a wait for the CPU allows."""
        return max(0.0, min(time.monotonic(), self()) - self.start - self.seconds)
