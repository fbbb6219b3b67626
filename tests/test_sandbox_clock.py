"""A submission's work is timed by the CPU time of its process, which the grader reads from the kernel: a
call that waits costs no work, one that computes does, whatever the wall clock says."""

from __future__ import annotations

import pytest

from autograder.model.submission import public_files, setup_imports
from autograder.isolation.limits import Limits
from autograder.isolation.proxy import Clock, Student
from autograder.isolation.sandbox import Loads, SandboxChannel, Zygote

pytestmark = pytest.mark.slow

CODE = """
import time
def nap(seconds):
    time.sleep(seconds)
def spin(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
"""


@pytest.fixture(scope="module")
def student():
    zygote = Zygote(Limits(call_seconds=30), [], public_files(), setup_imports())
    zygote.wait_ready()
    loads = Loads(zygote)
    channel = SandboxChannel(loads)
    student = Student(channel, Clock(Limits(call_seconds=30, budget_seconds=300)))
    student.load([("cell", CODE)])
    yield student
    channel.close(kill=True)
    loads.close()
    zygote.close()


def test_a_call_that_sleeps_did_no_work(student):
    student.call("nap", 0.3)
    assert student.last_seconds >= 0.3 and student.last_work_seconds < 0.05


def test_a_call_that_computes_did_its_work(student):
    student.call("spin", 0.3)
    assert 0.3 <= student.last_work_seconds <= student.last_seconds


def test_the_work_of_a_call_in_a_process_of_its_own_is_counted_too(student):
    student.call_holding(((0.01,), {}), "spin", 0.3)
    assert 0.3 <= student.last_work_seconds <= student.last_seconds
