"""The memory a call into a submission held at once, by the kernel's count, wherever the work ran.

Why the kernel's peak resident memory, and not a tally of tensors kept by the sandbox: the sandbox runs the
submission's code, which can replace anything in its process (a dispatch mode, an allocator hook), so what
it counts is its word; the kernel's count is not. Why not a cap on the call's address space (as before):
that counted what a library maps for itself (a first call of `torch.broadcast_shapes` imports sympy, some
30 MiB), and nothing done in another process.

How: just before the call, the grader resets the peak (VmHWM) of every process of the sandbox, by writing
5 to /proc/PID/clear_refs, and notes each one's resident memory then; its own helpers that compute for the
call (the reference process that serves other parts' names) are started afresh, so that their peak is what
they hold then (they are not dumpable: a grader that is not root could not reset them). After the reply,
what each held at its peak beyond that, summed, is what the call held at once (a sum of peaks: never less
than the true peak).
The call is made in a process of its own whose heap keeps no free memory (isolation.confinement
`without_heap_slack`), after a warm-up call that pays for lazy imports and first-use buffers; the
reference process's heap keeps none either. A call during which a process of the sandbox started or
ended (its memory cannot be read) is not measured: the check fails it, saying why. Honest code starts
none.
"""

from __future__ import annotations

from .deadline import Key, family, process_stat

NOT_MEASURED = "its memory could not be measured"


def _resident(pid: int) -> tuple[int, int] | None:
    """(resident bytes now, their peak) of process `pid` (VmRSS, VmHWM); None when it is gone."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            found = {line.split(b":")[0]: int(line.split()[1]) * 1024 for line in status
                     if line.startswith((b"VmRSS:", b"VmHWM:"))}
        return found[b"VmRSS"], found[b"VmHWM"]
    except (OSError, ValueError, KeyError, IndexError):
        return None


def _reset_peak(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as clear:
            clear.write("5")  # the peak resident memory (VmHWM) is reset to what is resident now
        return True
    except OSError:
        return False


class Held:
    """Started just before a call: the processes of the sandbox `root` (it and every process below it), their
    peaks reset, and `helpers` (the grader's own processes that compute for the call, just started: their
    peak is what they hold now). A process that had ended before (not yet reaped) holds nothing."""

    def __init__(self, root: int | None, helpers: list[int]):
        self.root, self.helpers = root, helpers
        self.why_not = ""  # why the call cannot be measured, if it cannot
        self._before: dict[Key, tuple[int, float]] = {}  # resident bytes at the start, CPU of reaped children
        self._ended: set[Key] = set()  # processes that had ended before the call
        found = self._processes()
        if found is None:
            self.why_not = "the grader could not list its processes"
            return
        for pid, key, reaped, alive in found:
            if not alive:
                self._ended.add(key)
                continue
            resident = _resident(pid) if pid in self.helpers or _reset_peak(pid) else None
            if resident is None and not _runs(pid):  # it ended meanwhile, before the call
                self._ended.add(key)
                continue
            if resident is None:
                self.why_not = "the grader could not read or reset a process's peak memory"
                return
            self._before[key] = (resident[1] if pid in self.helpers else resident[0], reaped)

    def _processes(self) -> list[tuple[int, Key, float, bool]] | None:
        """(pid, key, CPU seconds of its reaped children, whether it runs: not a zombie) of each process, None
        when they cannot be listed."""
        members = family(self.root) if self.root else None
        if members is None:
            return None
        found = []
        for pid in [*members, *self.helpers]:
            stat = process_stat(pid)
            if stat is not None:
                found.append((pid, stat[0], stat[2], _runs(pid)))
        return found

    def bytes(self) -> int | str:
        """The bytes the call held at once beyond what was resident when it started, or why that is unknown."""
        if self.why_not:
            return f"{NOT_MEASURED}: {self.why_not}"
        found = self._processes()
        changed = f"{NOT_MEASURED}: it started or ended processes during the call (the grader cannot see what an " \
                  "ended process held)"
        if found is None:
            return changed
        now = {key: (pid, reaped, alive) for pid, key, reaped, alive in found if key not in self._ended}
        if set(now) != set(self._before):
            return changed
        held = 0
        for key, (pid, reaped, alive) in now.items():
            resident = _resident(pid) if alive else None
            at_start, reaped_before = self._before[key]
            if resident is None or reaped != reaped_before:
                return changed
            held += max(0, resident[1] - at_start)  # the peak now beyond what it held when the call started
        return held


PF_EXITING = 0x4  # the kernel's flag of a process on its way out (its memory already given back)


def _runs(pid: int) -> bool:
    """Whether process `pid` has not ended: a zombie (not yet reaped) has, and so has one on its way out."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
        return fields[0] not in (b"Z", b"X") and not int(fields[6]) & PF_EXITING  # state; flags: field 9
    except (OSError, IndexError, ValueError):
        return False
