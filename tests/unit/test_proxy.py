"""The grader's side of a submission: a submission's clock makes one bad call cost one timeout."""

from __future__ import annotations

import pytest

from autograder.isolation import protocol, wire
from autograder.isolation.proxy import Clock, SandboxBreach, Student, StudentError, in_process_channel


class Scripted:
    """A channel that answers with a fixed error per request and counts the requests it got."""

    def __init__(self, kind: str = "", message: str = "") -> None:
        self.kind, self.message, self.requests = kind, message, []

    def __call__(self, request: bytes, seconds: float, on_callback) -> bytes:
        self.requests.append((wire.decode(request)["op"], seconds))
        if self.kind:
            return wire.encode(protocol.error(self.kind, self.message))
        return wire.encode(protocol.ok([] if self.requests[-1][0] == protocol.LOAD else 1))


@pytest.mark.parametrize("kind, says", [(protocol.TIMEOUT, "timed out"), (protocol.MEMORY, "ran out of memory")])
def test_a_name_whose_call_timed_out_or_ran_out_of_memory_is_not_called_again(kind, says):
    channel = Scripted(kind, "stopped")
    student = Student(channel, Clock(call_seconds=5, budget_seconds=100))
    with pytest.raises(StudentError):
        student.call("costly")
    with pytest.raises(StudentError) as again:
        student.call("costly")
    assert len(channel.requests) == 1 and again.value.kind == kind
    assert says in str(again.value) and "not called again" in str(again.value)
    with pytest.raises(StudentError):
        student.call("other")  # another name still is
    assert len(channel.requests) == 2


def test_code_whose_loading_timed_out_is_not_loaded_again_by_any_part():
    clock = Clock(call_seconds=5, budget_seconds=100)
    first = Student(Scripted(protocol.TIMEOUT, "stopped"), clock)
    first.load([("cell", "while True: pass")], [])
    second_channel = Scripted()
    second = Student(second_channel, clock)  # another part of the same submission
    second.load([("cell", "while True: pass")], [])
    with pytest.raises(StudentError) as error:
        second.call("causal_mask")
    assert second_channel.requests == [] and "did not finish loading" in error.value.message


def test_once_the_budget_is_spent_no_call_is_made():
    channel = Scripted()
    student = Student(channel, Clock(call_seconds=5, budget_seconds=0))
    with pytest.raises(StudentError) as error:
        student.call("f")
    assert channel.requests == [] and error.value.kind == protocol.BUDGET and "Not run" in error.value.message


def test_a_call_gets_at_most_what_is_left_of_the_budget():
    channel = Scripted()
    Student(channel, Clock(call_seconds=60, budget_seconds=3)).call("f")
    assert 0 < channel.requests[0][1] <= 3


def test_a_breach_stops_grading():
    with pytest.raises(SandboxBreach):
        Student(Scripted(protocol.BREACH, "the reference can be read"), Clock(5, 100)).call("f")


def test_remote_callables_run_in_the_grader_and_count_replies():
    seen = []
    student = Student(in_process_channel(), Clock(5, 100))
    student.load([("cell", "def twice(fn, x):\n    fn(x)\n    fn(x)\n    return 'done'\n")], [])
    import torch

    handle = student.remote(lambda args: seen.append(args["shapes"]))
    assert student.call("twice", handle, torch.zeros(2, 3)) == "done"
    assert seen == [[[2, 3]], [[2, 3]]]
    assert student.replies == 3  # load, remote, call
