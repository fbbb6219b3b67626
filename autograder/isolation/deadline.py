"""Deadlines that do not charge a submission for a busy machine, nor pay it for keeping the machine busy.

A call's time limit is wall-clock time, but where more processes are runnable than there are cores a
process also waits for a CPU, not by its own doing. The kernel counts that wait (the run-queue delay,
second field of /proc/PID/schedstat), so a `Deadline` moves later by what the answering process's main
thread has waited since the request, up to `STRETCH` times its limit. The figures come from the kernel,
never from the sandbox.

A submission whose own threads or processes keep the CPU busy makes its main thread wait too, and that
is its own doing: so the allowance is that wait less the CPU time the rest of its sandbox used meanwhile,
and less what the grader spent serving its calls meanwhile (a thread of its own can keep callbacks
coming: the grader's CPU then competes with its main thread).
The sandbox is the process the grader started it in and every process below it (a part's process is
forked from the loaded submission, whose threads live on there), found through the kernel's lists of
each thread's children, never through a cgroup (a sandbox has one only sometimes). A sandbox of more
than `MOST_PROCESSES` processes, or where the kernel keeps no such lists, gets nothing back.

/proc is read past the request only once the plain limit has passed, and a look is used again for a
moment, so that a stream of frames cannot make the grader read it for each one. The kernel adds a wait
only once the process runs again: one found runnable at its deadline, whose sandbox has hardly run since
the last look, is looked at again `QUEUED_LOOK` later. Where the kernel keeps no count, a deadline is a
plain one. `cpu_used` is the CPU time the process used meanwhile: the work a call did, which a busy
machine does not lengthen.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

STRETCH = 3.0  # the most a deadline may move: to this many times its limit after the request
QUEUED_LOOK = 0.05  # seconds: how soon a process found waiting for a CPU at its deadline is looked at again
MOST_PROCESSES = 256  # a sandbox of more processes than this (or of more threads than the next) gets no time
MOST_TASKS = 1024  # back: what one look costs stays bounded
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

Key = tuple[int, int]  # (pid, start time in clock ticks after boot): one process, never a later one with its pid


def schedstat(pid: int) -> tuple[float, float] | None:
    """(seconds on a CPU, seconds waited runnable for one) of the main thread of `pid` (in this process's
    PID namespace); None when it is gone or the kernel does not say."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as stats:
            ran, waited = stats.read().split()[:2]
        return int(ran) / 1e9, int(waited) / 1e9
    except (OSError, ValueError):
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


def process_stat(pid: int) -> tuple[Key, float, float] | None:
    """(its key, the seconds all its threads ran, the seconds the children it reaped ran) for process `pid`;
    None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        reaped = (int(fields[13]) + int(fields[14])) / CLOCK_TICKS  # cutime, cstime: fields 16 and 17
        key = (pid, int(fields[19]))  # starttime: field 22
    except (OSError, ValueError, IndexError):
        return None
    ran = cpu_time(pid)
    return None if ran is None else (key, ran, reaped)


def process_cpu(pid: int) -> tuple[Key, float] | None:
    """(its key, the seconds all its threads ran plus what the children it reaped ran) for process `pid`;
    None when it is gone."""
    stat = process_stat(pid)
    return None if stat is None else (stat[0], stat[1] + stat[2])


def family(root: int) -> list[int] | None:
    """`root` and every process below it, by the children the kernel lists for each of their threads; None
    past `MOST_PROCESSES` processes or `MOST_TASKS` threads, or where the kernel keeps no such lists."""
    found: list[int] = []
    seen: set[int] = set()
    queue, tasks = [root], 0
    while queue:
        pid = queue.pop()
        if pid in seen:
            continue
        seen.add(pid)
        if len(seen) > MOST_PROCESSES:
            return None
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone
        tasks += len(threads)
        if tasks > MOST_TASKS:
            return None
        found.append(pid)
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/children", "rb") as children:
                    queue += map(int, children.read().split())
            except FileNotFoundError:
                if not os.path.exists(f"/proc/{pid}/task/{thread}"):
                    continue  # a thread that ended meanwhile
                return None  # the kernel keeps no lists of children (CONFIG_PROC_CHILDREN)
            except (OSError, ValueError):
                continue
    return found


def family_cpu(root: int) -> dict[Key, float] | None:
    """The CPU seconds of `root` and of every process below it (see `process_cpu`), by process; None where
    `family` gives none."""
    members = family(root)
    if members is None:
        return None
    return dict(found for pid in members if (found := process_cpu(pid)) is not None)


@dataclass
class _Look:
    when: float
    waited: float  # the main thread's wait since the request
    others: float  # CPU seconds the rest of the sandbox, and the grader serving it, used since the request
    ran: float  # CPU seconds the whole sandbox, and the grader serving it, used since the request
    runnable: bool


class Deadline:
    """When the reply to a request made now is due: `seconds` from now, plus the time the main thread of
    process `pid` has waited for a CPU since (none when `pid` is None) less the CPU time the rest of its
    sandbox used since, up to `STRETCH` times `seconds`. The sandbox is process `sandbox` (the one the
    grader started, of which `pid` is a descendant; `pid` itself when None) and every process below it;
    `serving`, where given, is a clock of the CPU seconds the grader has spent on the submission's calls.
    Called, it says when that is now (time.monotonic()), as `frames.recv_frame` asks it each time a wait
    ends; until the plain limit has passed, that limit (the kernel's count is read only once it could
    matter)."""

    def __init__(self, seconds: float, pid: int | None = None, sandbox: int | None = None,
                 serving: Callable[[], float] | None = None):
        self.seconds, self.pid = seconds, pid
        self.start = time.monotonic()
        self._root = sandbox or pid
        self._serving = serving
        self._serving_before = serving() if serving is not None else 0.0
        self._main_before = schedstat(pid) if pid else None  # (ran, waited) of its main thread at the request
        self._cpu_before = cpu_time(pid) if pid else None
        self._before = family_cpu(self._root) if self._main_before is not None and self._root else None
        self._seen: dict[Key, float] = dict(self._before or {})  # every process of the sandbox, as last seen
        self._look: _Look | None = None
        self._judged: tuple[_Look, bool] | None = None  # the last look `_queued` judged, and how

    def _take_look(self) -> _Look | None:
        """What the kernel says now (a look taken a moment ago, again); None where it cannot say."""
        now = time.monotonic()
        if self._look is not None and now - self._look.when < QUEUED_LOOK / 2:
            return self._look
        if self._before is None or self._main_before is None or self.pid is None or self._root is None:
            return None  # (a count before implies a root: see __init__)
        main, found = schedstat(self.pid), family_cpu(self._root)
        if main is None or found is None or not any(key[0] == self.pid for key in found):
            return None
        for key, used in found.items():  # one that ended keeps what it was last seen to use
            self._seen[key] = max(used, self._seen.get(key, 0.0))
        # a child reaped within the sandbox shows again in its parent's count: counted twice, never given back
        ran = sum(max(0.0, used - self._before.get(key, 0.0)) for key, used in self._seen.items())
        main_ran = max(0.0, main[0] - self._main_before[0])
        served = max(0.0, self._serving() - self._serving_before) if self._serving is not None else 0.0
        self._look = _Look(now, max(0.0, main[1] - self._main_before[1]), max(0.0, ran - main_ran) + served,
                           ran + served, runnable(self.pid))
        return self._look

    def waited(self) -> float:
        """Seconds the process's main thread has waited for a CPU since the request, less the CPU time the
        rest of its sandbox used meanwhile (0 where that is not known)."""
        look = self._take_look()
        return 0.0 if look is None else max(0.0, look.waited - look.others)

    def cpu_used(self) -> float | None:
        """Seconds the process has run on a CPU since the request; None where that is not known."""
        if self._cpu_before is None or self.pid is None:  # no pid, or no count at the request
            return None
        now = cpu_time(self.pid)
        return None if now is None else max(0.0, now - self._cpu_before)

    def work_done(self) -> float | None:
        """CPU seconds the whole sandbox, and the grader serving it, used since the request: the work the call
        caused wherever it ran (in a thread or a process of its own, or in a name the grader served), which a
        busy machine does not lengthen; None where the kernel cannot say."""
        self._look = None  # a fresh look: the call has ended
        look = self._take_look()
        return None if look is None else look.ran
    def __call__(self) -> float:
        plain = self.start + self.seconds
        now = time.monotonic()
        if now < plain:  # it can only be later: the caller asks again once this has passed
            return plain
        due = self.start + min(self.seconds + self.waited(), STRETCH * self.seconds)
        if due <= now and self._queued():
            return min(now + QUEUED_LOOK, self.start + STRETCH * self.seconds)
        return due

    def _queued(self) -> bool:
        """Whether the process may be waiting for a CPU now, a wait the kernel has not counted yet: runnable,
        not kept waiting by its own sandbox (on a first look, the rest of it used under a tenth of the time
        since the request), and after a first look the sandbox's CPU time has moved by under a tenth of the
        time since the last look."""
        look = self._take_look()
        if look is None or not look.runnable:
            return False
        if self._judged is not None and self._judged[0] is look:
            return self._judged[1]  # nothing new since
        if self._judged is None:
            queued = look.others < 0.1 * (look.when - self.start)
        else:
            last = self._judged[0]
            queued = look.ran - last.ran < 0.1 * (look.when - last.when)
        self._judged = (look, queued)
        return queued

    def overrun(self) -> float:
        """Seconds past its limit that the request has lasted so far, which only a wait for the CPU allows."""
        return max(0.0, min(time.monotonic(), self()) - self.start - self.seconds)
