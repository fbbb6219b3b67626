"""A worker's CPU slot is a lock on the run's own slot file, wherever the worker was forked from: the
slots are sent over the worker's socket with its settings (a worker forked from the forkserver inherits
none of the run's descriptors), so that no more than `jobs` workers compute at once; a worker waiting
for one waits in line at the run's gate."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from autograder.engine.slots import CpuSlots
from autograder.pool.worker import FDS_PER_MESSAGE, WorkerProcess, WorkerSettings

# A process that inherits nothing but its socket, as a forkserver child: it takes the settings the way a
# worker does, holds a slot, says which, and lets go when its stdin closes.
HOLDER = """
import socket, sys
from autograder.engine.slots import CpuSlots
from autograder.pool.worker import _settings
settings = _settings(socket.socket(fileno=int(sys.argv[1])))
slots = CpuSlots(list(settings.cpu_slots))
slots.acquire()
print(len(settings.cpu_slots), slots._held, flush=True)
sys.stdin.read()
"""


def _holder(slots: list[int]) -> tuple[subprocess.Popen, WorkerProcess]:
    ours, theirs = socket.socketpair()
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(theirs.fileno())], pass_fds=[theirs.fileno()],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    theirs.close()
    return process, WorkerProcess(WorkerSettings(cpu_slots=tuple(slots)), ours, process)


def _lockable(fd: int) -> bool:
    """Whether a lock of our own on the slot file behind `fd` can be had now."""
    mine = os.open(f"/proc/self/fd/{fd}", os.O_RDWR)
    try:
        fcntl.flock(mine, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(mine)


def _end(process: subprocess.Popen, worker: WorkerProcess) -> None:
    process.stdin.close()
    assert process.wait(30) == 0
    worker.sock.close()


@pytest.fixture
def slots():
    made: list[int] = []

    def make(count: int) -> list[int]:
        """The gate's descriptor, then the slots'."""
        made.extend(CpuSlots.create(count))
        return made[-count - 1:]

    yield make
    for fd in made:
        os.close(fd)


def test_a_worker_that_inherits_nothing_holds_the_runs_slot(slots):
    gate, slot = slots(1)
    process, worker = _holder([gate, slot])
    try:
        assert process.stdout.readline().split() == ["2", "0"]
        assert not _lockable(slot), "the worker's lock is not on the run's slot file"
        assert _lockable(gate), "the worker stayed at the gate once it held a slot"
    finally:
        _end(process, worker)
    assert _lockable(slot), "the slot stayed locked after its worker ended"


def test_two_workers_hold_two_different_slots(slots):
    run = slots(2)
    first, first_worker = _holder(run)
    second, second_worker = _holder(run)
    try:
        held = {first.stdout.readline().split()[1], second.stdout.readline().split()[1]}
        assert held == {"0", "1"}
        assert not any(_lockable(fd) for fd in run[1:])
    finally:
        _end(first, first_worker)
        _end(second, second_worker)


def test_more_slots_than_one_message_carries_all_arrive(slots):
    run = slots(FDS_PER_MESSAGE + 3)
    process, worker = _holder(run)
    try:
        count, held = process.stdout.readline().split()
        assert int(count) == len(run)
        assert not _lockable(run[1 + int(held)])
    finally:
        _end(process, worker)


def test_a_worker_waiting_for_a_slot_waits_at_the_gate_then_takes_the_slot_let_go(slots):
    gate, slot = slots(1)
    holding, waiting = CpuSlots([gate, slot]), CpuSlots([gate, slot])  # two workers' own open files
    holding.acquire()
    waiter = threading.Thread(target=waiting.acquire)
    waiter.start()
    deadline = time.monotonic() + 30
    while _lockable(gate) and time.monotonic() < deadline:  # until the waiting one is in line
        os.sched_yield()
    assert not _lockable(gate), "the waiting worker is not in line at the gate"
    holding.release()
    waiter.join(30)
    assert not waiter.is_alive() and waiting._held == 0, "the slot let go was not taken by the one in line"
    assert _lockable(gate) and not _lockable(slot)
    waiting.release()
