"""After a submission's loaded sandbox is lost and loaded again, ending a part forked by the lost one
leaves alone the parts of the new one (in a PID namespace the new sandbox gives its parts the same pids)."""

from __future__ import annotations

import pytest

from autograder.model.submission import public_files, setup_imports
from autograder.isolation.limits import Limits
from autograder.isolation.proxy import Clock, Student
from autograder.isolation.sandbox import Loads, SandboxChannel, Zygote

pytestmark = pytest.mark.slow

CODE = """
calls = 0
def count():
    global calls
    calls += 1
    return calls
"""


@pytest.fixture(scope="module")
def zygote():
    zygote = Zygote(Limits(call_seconds=30), [], public_files(), setup_imports())
    zygote.wait_ready()
    yield zygote
    zygote.close()


def test_ending_a_part_of_a_lost_sandbox_leaves_the_new_sandboxs_parts_alone(zygote):
    loads = Loads(zygote)
    channels = [SandboxChannel(loads), SandboxChannel(loads)]
    first, second = (Student(channel, Clock(Limits(call_seconds=30, budget_seconds=300))) for channel in channels)
    try:
        first.load([("cell", CODE)])  # loads the code, and forks the first part
        assert first.call("count") == 1
        (loaded,) = loads._loaded.values()
        lost = loaded.process
        lost.kill()  # the loaded sandbox, and the first part with it, are gone
        second.load([("cell", CODE)])  # the code is loaded again in a new sandbox, which forks the second part
        assert loaded.process is not lost
        assert second.call("count") == 1
        channels[0].close(kill=True)  # the first part ends: nothing in the new sandbox may be killed for it
        assert second.call("count") == 2, "the second part's process was killed and forked again"
    finally:
        for channel in channels:
            channel.close(kill=True)
        loads.close()


def test_a_part_that_died_with_a_sandbox_the_grader_ended_is_forked_again_and_charged_nothing(zygote):
    """The grader ends a loaded sandbox that is late to answer a request to fork or kill a part (a busy
    machine can make it late); the parts it had forked die with it, through no doing of theirs."""
    loads = Loads(zygote)
    channels = [SandboxChannel(loads), SandboxChannel(loads)]
    first, second = (Student(channel, Clock(Limits(call_seconds=30, budget_seconds=300))) for channel in channels)
    try:
        first.load([("cell", CODE)])
        assert first.call("count") == 1
        (loaded,) = loads._loaded.values()
        loaded.close()  # as LoadedSandbox.fork does when its answer is late: the first part dies with it
        second.load([("cell", CODE)])  # loaded again, in a new sandbox
        assert second.call("count") == 1
        assert first.call("count") == 1, "the first part's next call should find a process forked afresh"
    finally:
        for channel in channels:
            channel.close(kill=True)
        loads.close()
