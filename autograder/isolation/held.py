"""The memory a call into a submission used, by the kernel's counts, wherever it was first allocated.

The design, and why each way around it fails, is in docs/measured-checks.md. In short: the grader
counts, from just before it sends the call until the reply, in the call's sandbox,

- every page the call's process touched for the first time: one page fault each, whether the page
  is new, a copy of memory it inherited (the call's process is forked, just before the call, from
  the one that ran the warm-up, which was forked from the loaded submission: what either kept, from
  import or from the warm-up, is shared until written, and writing it is a fault), or a page of a
  file. The process's heap keeps what is freed (`confinement.reuse_freed_heap`), so a page freed and
  allocated again is not counted twice; transparent huge pages are off in every sandbox (a fault
  maps one page) and cannot be turned on again (isolation.seccomp);
- its private memory when the call starts (what it could write without a fault), whatever put it
  there;
- the bytes every process of the sandbox wrote through write system calls (to pipes, files, or
  another process's memory through /proc): memory the kernel holds for it, which no fault shows.
  Sockets cannot be made in a sandbox, nor files and memfds mapped shared where CUDA cannot start;
- the whole size of every shared mapping (memory other processes may have filled) that a process of
  the sandbox has when the call starts or ends;
- for the grader's own processes that compute for the call (the reference process that serves other
  parts' names, started afresh), the peak of their resident memory.

No other process of the sandbox may run during the call, nor may one start or end: a process that
ran could have written memory it already held, which neither count shows. Honest code starts none.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .deadline import Key, cpu_time, family, process_stat

NOT_MEASURED = "its memory could not be measured"
PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")
MAPS_BYTES = 4 * 2**20  # the most of one process's list of mappings read (a torch process's is about 200 KiB)
_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class _Seen:
    """One process of the sandbox as the kernel counts it at one moment."""

    cpu: float  # seconds all its threads ran
    reaped: tuple[float, int]  # seconds and page faults of the children it reaped: they move when one ends
    faults: int  # page faults of all its threads and of the children it reaped, minor and major
    written: int  # bytes passed to write system calls (wchar)
    shared: int  # bytes of its shared mappings, mapped or not


def _faults(pid: int) -> tuple[int, int] | None:
    """(page faults of process `pid`'s threads, those of the children it reaped), minor and major."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return int(fields[7]) + int(fields[9]), int(fields[8]) + int(fields[10])  # minflt, cminflt, majflt, cmajflt
    except (OSError, ValueError, IndexError):
        return None


def _written(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/io", "rb") as io:
            return next(int(line.split()[1]) for line in io if line.startswith(b"wchar:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _shared(pid: int) -> int | None:
    """The bytes of the shared mappings of process `pid` (flag `s` in /proc/PID/maps); None when unknown."""
    try:
        with open(f"/proc/{pid}/maps", "rb") as maps:
            listing = maps.read(MAPS_BYTES + 1)
    except OSError:
        return None
    if len(listing) > MAPS_BYTES:
        return None
    total = 0
    for line in listing.splitlines():
        span, perms = line.split(b" ", 2)[:2]
        if perms[3:4] == b"s":
            start, _, end = span.partition(b"-")
            total += int(end, 16) - int(start, 16)
    return total


def _private(pid: int) -> int | None:
    """The bytes that only process `pid` maps (Private_Clean + Private_Dirty of /proc/PID/smaps_rollup)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            return sum(int(line.split()[1]) * 1024 for line in rollup if line.startswith(b"Private_"))
    except (OSError, ValueError, IndexError):
        return None


def _peak(pid: int) -> int | None:
    """The peak resident memory (VmHWM) of process `pid`."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith(b"VmHWM:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _owner(pid: int) -> tuple[int, int] | None:
    """(uid, gid) of process `pid`, real ones, from /proc/PID/status (which anyone may read)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            ids = {line[:4]: int(line.split()[1]) for line in status if line[:4] in (b"Uid:", b"Gid:")}
        return ids[b"Uid:"], ids[b"Gid:"]
    except (OSError, ValueError, IndexError, KeyError):
        return None


@contextmanager
def _as_owner(pid: int) -> Iterator[None]:
    """Reads of /proc/PID/{io,maps,smaps_rollup} in this thread made as process `pid`'s owner would make them.

    The kernel lets a process read those of another only with CAP_SYS_PTRACE, which a container's root
    lacks (Docker's default capabilities), or as the other's owner where the other is dumpable. A sandbox
    with a uid of its own makes itself dumpable again (confinement.confine); a grader that is root takes
    that uid as its file-system identity, for this thread alone (setfsuid is per thread), and gives it
    back. Where it cannot (no CAP_SETUID), reads go on as before and may fail: the call is then not
    measured, and the check fails."""
    owner = _owner(pid) if os.geteuid() == 0 else None
    if owner is None or owner == (0, 0):
        yield
        return
    old_gid = _libc.setfsgid(owner[1])
    old_uid = _libc.setfsuid(owner[0])
    try:
        yield
    finally:
        _libc.setfsuid(old_uid)
        _libc.setfsgid(old_gid)


def _see(pid: int) -> tuple[Key, _Seen | None] | None:
    """Process `pid` as the kernel counts it now (None for one that has ended but is not yet reaped: it
    holds nothing); None when it is gone or cannot be read."""
    stat = process_stat(pid)
    if stat is None:
        return None
    if not _runs(pid):
        return stat[0], None
    with _as_owner(pid):
        written, shared = _written(pid), _shared(pid)
    cpu, faults = cpu_time(pid), _faults(pid)
    if cpu is None or faults is None or written is None or shared is None:
        return None
    return stat[0], _Seen(cpu, (stat[2], faults[1]), sum(faults), written, shared)


class MemoryUse:
    """Started just before a call: the processes of the sandbox `root` (it and every process below it), of
    which `call` runs the call, and `helpers`, the grader's own processes that compute for the call (just
    started: their peak is what they hold now). `bytes()`, once the reply is in, says what the call used."""

    def __init__(self, root: int | None, call: int | None, helpers: list[int]):
        self.call, self.helpers = call, helpers
        self.root = root
        self.why_not = ""  # why the call cannot be measured, if it cannot
        self._before: dict[Key, _Seen | None] = {}
        self._call_key: Key | None = None
        self._private = 0
        self._helper_peaks: dict[int, int] = {}
        found = self._look()
        private = None
        if call:
            with _as_owner(call):
                private = _private(call)
        if found is None or private is None or call is None:
            self.why_not = "the grader could not read what its processes hold"
            return
        self._before, self._private = found, private
        self._call_key = next((key for key in found if key[0] == call), None)
        if self._call_key is None:
            self.why_not = "the process that runs the call is not in its sandbox"
        for pid in helpers:
            peak = _peak(pid)
            if peak is None:
                self.why_not = "the grader could not read its own helper's memory"
            self._helper_peaks[pid] = peak or 0

    def _look(self) -> dict[Key, _Seen | None] | None:
        """Every process of the sandbox, as the kernel counts it now (None: ended, not yet reaped); None where
        one cannot be read."""
        members = family(self.root) if self.root else None
        if members is None:
            return None
        found = {}
        for pid in members:
            seen = _see(pid)
            if seen is None:
                return None
            found[seen[0]] = seen[1]
        return found

    def bytes(self) -> int | str:
        """The bytes the call used (see the module's docstring), or why that is unknown."""
        if self.why_not:
            return f"{NOT_MEASURED}: {self.why_not}"
        after = self._look()
        if after is None or not _same_processes(self._before, after):
            return (f"{NOT_MEASURED}: it started or ended processes during the call (the grader cannot see what an "
                    "ended process held)")
        live = {key: seen for key, seen in after.items() if seen is not None}
        counted = {key: seen for key, seen in self._before.items() if seen is not None}  # live's keys (_same_processes)
        ran = [key for key, seen in live.items() if key != self._call_key and seen.cpu != counted[key].cpu]
        if ran:
            return (f"{NOT_MEASURED}: {len(ran)} other process{'es' if len(ran) > 1 else ''} of its sandbox ran during "
                    "the call (what a process writes into memory it already holds shows nowhere)")
        used = self._private
        for key, seen in live.items():
            before = self._before[key]
            assert before is not None
            used += (seen.faults - before.faults) * PAGE_BYTES + seen.written - before.written
            used += max(seen.shared, before.shared)
        for pid, at_start in self._helper_peaks.items():
            peak = _peak(pid)
            if peak is None:
                return f"{NOT_MEASURED}: the grader could not read its own helper's memory"
            used += max(0, peak - at_start)
        return used


def _same_processes(before: dict[Key, _Seen | None], after: dict[Key, _Seen | None]) -> bool:
    """Whether no process started, ended or reaped a child between the two looks."""
    return set(before) == set(after) and all(_same_state(before[key], seen) for key, seen in after.items())


def _same_state(was: _Seen | None, seen: _Seen | None) -> bool:
    """Both looks found the process ended (None), or both found it with the same children reaped."""
    if was is None or seen is None:
        return was is None and seen is None
    return seen.reaped == was.reaped


PF_EXITING = 0x4  # the kernel's flag of a process on its way out (its memory already given back)


def _runs(pid: int) -> bool:
    """Whether process `pid` has not ended: a zombie (not yet reaped) has, and so has one on its way out."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return fields[0] not in (b"Z", b"X") and not int(fields[6]) & PF_EXITING  # state; flags: field 9
    except (OSError, IndexError, ValueError):
        return False
