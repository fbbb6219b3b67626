"""A deadline gives back the time a process waited for a busy machine's CPU, and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from types import SimpleNamespace

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
    monkeypatch.setattr(deadline, "run_delay", lambda pid: next(waited))
    due = Deadline(2.0, 12345)
    due.start -= 2.0  # its plain limit has passed
    assert due() == due.start + STRETCH * 2.0


class _Kernel:
    """What the kernel says of one process, and the time, as a test sets them."""

    def __init__(self, monkeypatch, runnable: bool):
        self.now, self.cpu, self.is_runnable = 1000.0, 5.0, runnable
        monkeypatch.setattr(deadline, "time", SimpleNamespace(monotonic=lambda: self.now))
        monkeypatch.setattr(deadline, "run_delay", lambda pid: 0.0)  # a wait is counted only once the process runs
        monkeypatch.setattr(deadline, "cpu_time", lambda pid: self.cpu)
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
