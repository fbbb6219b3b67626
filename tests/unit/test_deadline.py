"""A deadline gives back the time a process waited for a busy machine's CPU, and nothing else: not the
wait its own threads and processes caused by keeping the CPU busy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace
from typing import Callable

import pytest

from autograder.isolation import deadline
from autograder.isolation.deadline import STRETCH, Deadline

BUSY = "while True: pass"
ONE_CPU = min(os.sched_getaffinity(0))


def _pinned(code: str) -> subprocess.Popen:
    """A Python process on one CPU only, so that a few of them must take turns on it."""
    return subprocess.Popen([sys.executable, "-c", f"import os\nos.sched_setaffinity(0, {{{ONE_CPU}}})\n{code}"])


@pytest.fixture
def processes():
    started: list[subprocess.Popen] = []
    yield started
    for process in started:
        process.kill()
        process.wait()


def test_without_a_process_a_deadline_is_a_plain_one():
    due = Deadline(2.0)
    assert due() == due.start + 2.0 and due.waited() == 0.0 and due.overrun() == 0.0


def test_a_process_kept_off_the_cpu_gets_its_wait_back(processes):
    processes += [_pinned(BUSY) for _ in range(3)]  # three on one CPU: each waits two thirds of the time
    due = Deadline(1.0, processes[0].pid)
    while due.waited() < 0.25 and time.monotonic() < due.start + 30:
        time.sleep(0.01)
    early = due()
    if time.monotonic() < due.start + 1.0:  # until the plain limit has passed, the plain limit: asked again then
        assert early == due.start + 1.0
    time.sleep(max(0.0, due.start + 1.0 - time.monotonic()))
    assert due.waited() >= 0.25 and due() >= due.start + 1.25


def test_a_sleeping_process_gets_nothing_back(processes):
    read, write = os.pipe()
    processes.append(subprocess.Popen([sys.executable, "-c", f"import os, time\nos.write({write}, b'.')\ntime.sleep(60)"],
                                      pass_fds=[write]))
    os.close(write)
    assert os.read(read, 1) == b"."  # it is about to sleep
    os.close(read)
    due = Deadline(1.0, processes[0].pid)
    time.sleep(0.5)  # the time in which it could have waited for a CPU, had it wanted one
    assert due.waited() < 0.02 and due() < due.start + 1.02


def test_no_wait_moves_a_deadline_past_its_stretch(monkeypatch):
    waited = iter([0.0, 1000.0])
    monkeypatch.setattr(deadline, "schedstat", lambda pid: (0.0, next(waited)))
    monkeypatch.setattr(deadline, "family_cpu", lambda root: {(root, 0): 0.0})
    due = Deadline(2.0, 12345)
    due.start -= 2.0  # its plain limit has passed
    assert due() == due.start + STRETCH * 2.0


class _Kernel:
    """What the kernel says of one process, and the time, as a test sets them."""

    def __init__(self, monkeypatch, runnable: bool):
        self.now, self.cpu, self.is_runnable = 1000.0, 5.0, runnable
        monkeypatch.setattr(deadline, "time", SimpleNamespace(monotonic=lambda: self.now))
        # a wait is counted only once the process runs; it has one thread and no processes of its own
        monkeypatch.setattr(deadline, "schedstat", lambda pid: (self.cpu, 0.0))
        monkeypatch.setattr(deadline, "cpu_time", lambda pid: self.cpu)
        monkeypatch.setattr(deadline, "family_cpu", lambda root: {(root, 0): self.cpu})
        monkeypatch.setattr(deadline, "runnable", lambda pid: self.is_runnable)

    def wait(self, seconds: float, ran: float = 0.0) -> None:
        self.now += seconds
        self.cpu += ran


def test_a_process_still_waiting_for_a_cpu_at_its_deadline_is_looked_at_again_until_it_runs(monkeypatch):
    kernel = _Kernel(monkeypatch, runnable=True)
    due = Deadline(2.0, 12345)
    kernel.wait(2.0)  # at its deadline, runnable, its wait not counted yet
    for _ in range(5):
        assert due() > kernel.now
        kernel.wait(deadline.QUEUED_LOOK)  # and still not run
    assert due() > kernel.now
    kernel.wait(deadline.QUEUED_LOOK, ran=deadline.QUEUED_LOOK)  # it ran: it is due
    assert due() <= kernel.now


def test_a_process_that_loops_on_an_idle_machine_gets_one_look_more(monkeypatch):
    kernel = _Kernel(monkeypatch, runnable=True)
    due = Deadline(2.0, 12345)
    kernel.wait(2.0, ran=2.0)
    assert due() == kernel.now + deadline.QUEUED_LOOK  # the first look cannot tell running from waiting
    kernel.wait(deadline.QUEUED_LOOK, ran=deadline.QUEUED_LOOK)
    assert due() <= kernel.now


def test_a_sleeping_process_gets_no_look_and_a_waiting_one_none_past_the_stretch(monkeypatch):
    kernel = _Kernel(monkeypatch, runnable=False)
    due = Deadline(2.0, 12345)
    kernel.wait(2.0)
    assert due() <= kernel.now
    kernel.is_runnable = True
    kernel.wait(STRETCH * 2.0 - 2.0)
    assert due() == due.start + STRETCH * 2.0


def test_a_process_that_is_gone_gets_nothing_back(processes):
    processes.append(_pinned(BUSY))
    due = Deadline(1.0, processes[0].pid)
    processes[0].kill()
    processes[0].wait()
    assert due.waited() == 0.0 and due() == due.start + 1.0


def _signalling(code: str) -> tuple[subprocess.Popen, int]:
    """A Python process that writes a byte to a pipe (`tell()`) where `code` says, and reads its go-ahead from
    stdin; the pipe's end to read."""
    read, write = os.pipe()
    process = subprocess.Popen([sys.executable, "-c", f"import os, time\ntell = lambda: os.write({write}, b'.')\n{code}"],
                               pass_fds=[write], stdin=subprocess.PIPE)
    os.close(write)
    return process, read


def test_cpu_used_counts_the_work_of_every_thread_and_not_the_sleep(processes):
    spin = "def spin(s):\n    t = time.thread_time()\n    while time.thread_time() - t < s: pass\n"
    process, read = _signalling(spin + "import threading\ntell()\nos.read(0, 1)\n"
                                "helper = threading.Thread(target=spin, args=(0.2,)); helper.start()\n"
                                "spin(0.2); helper.join(); tell(); time.sleep(0.3); tell(); time.sleep(60)")
    processes.append(process)
    with os.fdopen(read, "rb", buffering=0) as told:
        assert told.read(1) == b"."
        due = Deadline(5.0, process.pid)
        process.stdin.write(b".")
        process.stdin.flush()
        assert told.read(1) == b"."  # both threads spun 0.2 s, the helper has ended
        worked = due.cpu_used()
        assert told.read(1) == b"."  # then it slept 0.3 s
        slept = due.cpu_used() - worked
    assert 0.38 <= worked < 1.0 and slept < 0.05


def test_cpu_used_of_a_process_that_is_gone_is_unknown(processes):
    processes.append(_pinned(BUSY))
    due = Deadline(1.0, processes[0].pid)
    processes[0].kill()
    processes[0].wait()
    assert due.cpu_used() is None and Deadline(1.0).cpu_used() is None


# ---- a submission's own threads and processes buy it no time -------------------------------------------

SHORT = 0.3  # the limit of the deadlines below: on one CPU with busy others, a plain wait would reach 0.9 s
SLACK = 0.1  # a look more (QUEUED_LOOK) and the test's own waits
OWN = 8  # threads or processes of its own that keep its CPU busy
KEEP_BUSY = """
import ctypes, hashlib, os, threading, time
os.sched_setaffinity(0, {%d})
ENDS = time.monotonic() + 60  # a bound of its own, should the test not end it
data = bytes(32 << 20)  # a hash of it runs for tens of milliseconds without the GIL
def die_with_parent():
    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
def hash_loop():  # busy on the CPU without the GIL: every thread of the process can run at once
    while time.monotonic() < ENDS:
        hashlib.sha256(data).digest()
def loop():
    while time.monotonic() < ENDS:
        pass
""" % ONE_CPU


def _busy(code: str, command: tuple[str, ...] = ()) -> tuple[subprocess.Popen, int]:
    """A process (run by `command`, if any) on one CPU that runs KEEP_BUSY then `code`, which calls `tell(text)`
    once it is busy; the pipe's end to read that on."""
    read, write = os.pipe()
    code = KEEP_BUSY + f"tell = lambda text=b'.': os.write({write}, text)\n" + code
    process = subprocess.Popen([*command, sys.executable, "-c", code], pass_fds=[write])
    os.close(write)
    return process, read


def _told(told: int) -> bytes:
    """What a process wrote on its pipe once it was busy."""
    with os.fdopen(told, "rb", buffering=0) as line:
        said = line.read(4096)
    assert said, "the process ended before it was busy"
    return said


def _settle(due: Deadline) -> float:
    """Ask `due` each time the wait it named ends, as frames.recv_frame does, until that time has come;
    that time."""
    while True:
        when, now = due(), time.monotonic()
        if when <= now or now > due.start + 10:
            return when
        time.sleep(when - now)


def _measure(pid: int, own: Callable[[], float], sandbox: int | None = None) -> tuple[float, float, float]:
    """(how long after the request a `Deadline(SHORT)` for process `pid` of `sandbox` came due, the seconds
    its main thread waited for a CPU meanwhile, the CPU seconds its own other threads and processes ran
    meanwhile by `own()`, read from the kernel here)."""
    waited, ran = deadline.schedstat(pid)[1], own()
    due = Deadline(SHORT, pid, sandbox)
    ended = _settle(due) - due.start
    return ended, deadline.schedstat(pid)[1] - waited, own() - ran


def _other_threads(pid: int) -> float:
    """CPU seconds the threads of process `pid` but its main one have run."""
    return deadline.cpu_time(pid) - deadline.schedstat(pid)[0]


def _no_time_for_its_own(ended: float, waited: float, own: float) -> None:
    """Its main thread waited, most of that for its own threads and processes, and none of what they ran
    was given back: on an idle machine it was due at its limit, and on a busy one no later than its
    limit plus what its main thread waited beyond what they ran."""
    assert waited > 0.05 and own > 0.05, (waited, own)  # about 0.3 s each on an idle machine
    assert ended <= SHORT + max(0.0, waited - own) + SLACK, \
        f"due {ended:.2f} s after the request; it waited {waited:.2f} s, its own ran {own:.2f} s"


def test_threads_of_its_own_that_keep_the_cpu_busy_buy_no_time(processes):
    process, told = _busy(f"for _ in range({OWN}):\n    threading.Thread(target=hash_loop, daemon=True).start()\n"
                          "tell()\nhash_loop()")
    processes.append(process)
    _told(told)
    _no_time_for_its_own(*_measure(process.pid, lambda: _other_threads(process.pid)))


def test_processes_of_its_own_that_keep_the_cpu_busy_buy_no_time(processes):
    process, told = _busy("said, hear = os.pipe()\n"
                          f"for child in range({OWN} - 1):  # children, and a child of another child\n"
                          "    if os.fork() == 0:\n"
                          "        die_with_parent()\n"
                          "        if child == 0 and os.fork() == 0:\n"
                          "            die_with_parent()\n"
                          "        os.write(hear, b'%d ' % os.getpid())\n"
                          "        loop()\n"
                          "        os._exit(0)\n"
                          "pids = b''\n"
                          f"while pids.count(b' ') < {OWN}:\n"
                          "    pids += os.read(said, 4096)\n"
                          "tell(pids)\nloop()")
    processes.append(process)
    own = [int(pid) for pid in _told(told).split()]
    assert len(own) == OWN
    _no_time_for_its_own(*_measure(process.pid, lambda: sum(deadline.cpu_time(pid) for pid in own)))


def _reaped(pid: int) -> float:
    """CPU seconds the children that process `pid` reaped ran, by /proc/PID/stat."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rpartition(b")")[2].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def test_children_it_reaped_count_too(processes):
    process, told = _busy("told = False\n"
                          "while True:\n"
                          "    children = []\n"
                          f"    for _ in range({OWN}):  # short-lived: gone before the deadline looks\n"
                          "        children.append(os.fork())\n"
                          "        if children[-1] == 0:\n"
                          "            start = time.process_time()\n"
                          "            while time.process_time() - start < 0.005: pass\n"
                          "            os._exit(0)\n"
                          "    if not told: tell(); told = True\n"
                          "    start = time.monotonic()\n"
                          "    while time.monotonic() - start < 0.03: pass\n"
                          "    for child in children: os.waitpid(child, 0)\n")
    processes.append(process)
    _told(told)
    # what it reaped meanwhile is its own, less a round of children that may have run before the request
    # (those alive at the end are not counted here: a bound that is, if anything, too generous)
    ended, waited, own = _measure(process.pid, lambda: _reaped(process.pid))
    _no_time_for_its_own(ended, waited, own - OWN * 0.005)


def test_a_process_kept_busy_by_others_still_gets_its_wait_back(processes):
    processes += [_pinned(BUSY) for _ in range(3)]  # siblings, none of them its own
    process, told = _busy("tell()\nloop()")
    processes.append(process)
    _told(told)
    ended, waited, own = _measure(process.pid, lambda: _other_threads(process.pid))
    assert waited > 0.1 and own < 0.01
    assert ended >= SHORT + 0.1, f"due {ended:.2f} s after the request"


UNSHARE = shutil.which("unshare")


def test_threads_of_the_sandbox_a_part_was_forked_from_buy_it_no_time(processes):
    """A part's process is forked from the loaded submission, the first process of a PID namespace of its
    own: the threads the submission started as it loaded live on there, not in the part's process."""
    if UNSHARE is None or subprocess.run([UNSHARE, "-Urpf", "true"], capture_output=True).returncode != 0:
        pytest.skip("no PID namespaces here")
    process, told = _busy("die_with_parent()\n"
                          "with open('/proc/self/status') as status:  # the test's /proc: pids in its namespace\n"
                          "    me = next(l for l in status if l.startswith('NSpid:')).split()[1]\n"
                          f"for _ in range({OWN}):\n"
                          "    threading.Thread(target=hash_loop, daemon=True).start()\n"
                          "if os.fork() == 0:  # the part\n"
                          "    with open('/proc/self/status') as status:\n"
                          "        part = next(l for l in status if l.startswith('NSpid:')).split()[1]\n"
                          "    tell(f'{me} {part}'.encode())\n"
                          "    loop()\n"
                          "    os._exit(0)\n"
                          "hash_loop()", command=(UNSHARE, "-Urp", "--kill-child"))
    processes.append(process)
    sandbox, part = map(int, _told(told).split())
    _no_time_for_its_own(*_measure(part, lambda: deadline.cpu_time(sandbox), sandbox))


def test_the_busy_processes_of_another_sandbox_beside_it_are_not_its_own(processes):
    """Sandboxes are forked side by side (from the zygote): another sandbox's busy processes beside one
    keep it waiting like any others'."""
    if UNSHARE is None or subprocess.run([UNSHARE, "-Urpf", "true"], capture_output=True).returncode != 0:
        pytest.skip("no PID namespaces here")
    process, told = _busy("die_with_parent()\n"
                          "for _ in range(3):  # another sandbox's\n"
                          "    if os.fork() == 0:\n"
                          "        die_with_parent()\n"
                          "        loop()\n"
                          "        os._exit(0)\n"
                          "assert ctypes.CDLL(None).unshare(0x20000000) == 0  # CLONE_NEWPID, for the next child\n"
                          "if os.fork() == 0:  # the sandbox, first of a namespace inside this one's\n"
                          "    die_with_parent()\n"
                          "    with open('/proc/self/status') as status:\n"
                          "        tell(next(l for l in status if l.startswith('NSpid:')).split()[1].encode())\n"
                          "    loop()\n"
                          "    os._exit(0)\n"
                          "while time.monotonic() < ENDS:\n"
                          "    time.sleep(1)", command=(UNSHARE, "-Urp", "--kill-child"))
    processes.append(process)
    sandbox = int(_told(told))
    ended, waited, own = _measure(sandbox, lambda: _other_threads(sandbox), sandbox)
    assert waited > 0.1 and own < 0.01
    assert ended >= SHORT + 0.1, f"due {ended:.2f} s after the request"


def test_a_look_is_used_again_for_a_moment(monkeypatch, processes):
    processes.append(_pinned(BUSY))
    due = Deadline(0.01, processes[0].pid)
    looks = []
    family_cpu = deadline.family_cpu
    monkeypatch.setattr(deadline, "family_cpu", lambda root: looks.append(root) or family_cpu(root))
    time.sleep(0.02)
    for _ in range(100):
        due()
    assert len(looks) == 1
    time.sleep(deadline.QUEUED_LOOK)
    due()
    assert len(looks) == 2


def test_more_processes_than_a_look_may_walk_get_nothing_back(monkeypatch):
    monkeypatch.setattr(deadline, "schedstat", lambda pid: (0.0, 0.0 if not looked else 5.0))
    monkeypatch.setattr(deadline, "family_cpu", lambda root: {(root, 0): 0.0})
    looked = []
    due = Deadline(2.0, 12345)
    looked.append(True)
    due.start -= 2.0
    assert due.waited() == 5.0  # what it waited, where every process of it was seen
    due._look = None
    monkeypatch.setattr(deadline, "family_cpu", lambda root: None)  # over MOST_PROCESSES
    assert due.waited() == 0.0 and due() == due.start + 2.0


def test_a_family_past_its_bound_or_without_lists_of_children_is_not_walked(monkeypatch, processes):
    processes.append(_pinned(BUSY))
    assert deadline.family(processes[0].pid) == [processes[0].pid]
    monkeypatch.setattr(deadline, "MOST_PROCESSES", 0)
    assert deadline.family(processes[0].pid) is None
    monkeypatch.undo()
    real_open = open

    def no_children(path, *args, **kwargs):
        if str(path).endswith("/children"):
            raise FileNotFoundError(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", no_children)
    assert deadline.family(processes[0].pid) is None  # a kernel without CONFIG_PROC_CHILDREN: no stretch at all


def test_what_the_grader_spent_serving_its_calls_buys_it_no_time(monkeypatch):
    """A thread of the submission's can keep callbacks coming: the grader's CPU serving them competes with
    its main thread, whose wait is then of its own making."""
    kernel = _Kernel(monkeypatch, runnable=False)
    waited = [0.0]
    monkeypatch.setattr(deadline, "schedstat", lambda pid: (kernel.cpu, waited[0]))
    served = [10.0]
    due = Deadline(2.0, 12345, serving=lambda: served[0])
    kernel.wait(2.0)
    waited[0], served[0] = 1.5, 11.2  # its main thread waited 1.5 s while the grader served it 1.2 s
    assert abs(due.waited() - 0.3) < 1e-9 and abs(due() - (due.start + 2.3)) < 1e-9
