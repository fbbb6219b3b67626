"""The grader's side of a submission: a submission's clock makes one bad call cost one timeout."""

from __future__ import annotations

import pytest

from autograder.isolation import protocol, wire
from autograder.isolation.limits import Limits
from autograder.isolation.proxy import Clock, InProcessChannel, Seen, ServedError, Student, StudentError


class Scripted:
    """A channel that answers with a fixed error per request and counts the requests it got."""

    last_work_seconds = last_held = None

    def __init__(self, kind: str = "", message: str = "") -> None:
        self.kind, self.message, self.requests = kind, message, []

    def __call__(self, request: bytes, seconds: float, on_callback, warmup: bytes | None = None) -> bytes:
        self.requests.append((wire.decode(request)["op"], seconds))
        if self.kind:
            return wire.encode(protocol.error(self.kind, self.message))
        return wire.encode(protocol.ok([] if self.requests[-1][0] == protocol.LOAD else 1))


@pytest.mark.parametrize("kind, says", [(protocol.TIMEOUT, "timed out"), (protocol.MEMORY, "ran out of memory")])
def test_a_name_whose_call_timed_out_or_ran_out_of_memory_is_not_called_again(kind, says):
    channel = Scripted(kind, "stopped")
    student = Student(channel, Clock(Limits(call_seconds=5, budget_seconds=100)))
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
    clock = Clock(Limits(call_seconds=5, budget_seconds=100))
    first = Student(Scripted(protocol.TIMEOUT, "stopped"), clock)
    first.load([("cell", "while True: pass")])
    second_channel = Scripted()
    second = Student(second_channel, clock)  # another part of the same submission
    second.load([("cell", "while True: pass")])
    with pytest.raises(StudentError) as error:
        second.call("causal_mask")
    assert second_channel.requests == [] and "did not finish loading" in error.value.message


def test_once_the_budget_is_spent_no_call_is_made():
    channel = Scripted()
    student = Student(channel, Clock(Limits(call_seconds=5, budget_seconds=0)))
    with pytest.raises(StudentError) as error:
        student.call("f")
    assert channel.requests == [] and error.value.kind == protocol.BUDGET and "Not run" in error.value.message


def test_a_call_gets_at_most_what_is_left_of_the_budget():
    channel = Scripted()
    Student(channel, Clock(Limits(call_seconds=60, budget_seconds=3))).call("f")
    assert 0 < channel.requests[0][1] <= 3


def test_a_reply_that_claims_a_breach_is_only_that_call_s_failure():
    """What a sandbox says is data: an error of any kind it names is its own call's failure."""
    student = Student(Scripted("breach", "the reference can be read"), Clock(Limits(call_seconds=5, budget_seconds=100)))
    with pytest.raises(StudentError) as error:
        student.call("f")
    assert error.value.kind == "breach"  # nothing else: no exception the grader would stop on


def test_remote_callables_run_in_the_grader_and_count_replies():
    seen = []
    student = Student(InProcessChannel(), Clock(Limits(call_seconds=5, budget_seconds=100)))
    student.load([("cell", "def twice(fn, x):\n    fn(x)\n    fn(x)\n    return 'done'\n")])
    import torch

    handle = student.remote(lambda call: seen.append(call.shapes))
    assert student.call("twice", handle, torch.zeros(2, 3)) == "done"
    assert seen == [((2, 3),), ((2, 3),)]
    assert student.replies == 6  # load, serve, remote, two callbacks, call


def test_served_names_answer_the_submission_s_calls_and_raise_what_the_grader_raised():
    def serve(method, args, kwargs):
        if args[0] < 0:
            raise ServedError("ValueError", "negative")
        return args[0] * 2

    student = Student(InProcessChannel(), Clock(Limits(call_seconds=5, budget_seconds=100)))
    student.load([("cell", "def use(x):\n    try:\n        return helper(x)\n    except ValueError as e:\n"
                           "        return 'caught ' + str(e)\n")], [("helper", "function", serve, None)])
    assert student.call("use", 21) == 42
    assert student.call("use", -1) == "caught negative"


def test_a_served_function_carries_nothing_that_tells_it_apart():
    student = Student(InProcessChannel(), Clock(Limits(call_seconds=5, budget_seconds=100)))
    student.load([("cell", "def describe(fn):\n    return [fn.__name__, fn.__qualname__, fn.__module__, fn.__doc__, "
                           "repr(fn), type(fn).__name__]\n")])
    first = student.call("describe", student.remote(lambda *a: 1, values=True))
    second = student.call("describe", student.remote(lambda *a: 2, values=True))
    assert first == second and "lambda" not in str(first)


def test_a_forged_or_malformed_callback_fails_only_the_call_that_made_it():
    student = Student(InProcessChannel(), Clock(Limits(call_seconds=5, budget_seconds=100)))
    served = student.remote(lambda call: None)
    for message in ({"handle": 12345, "method": "seen", "args": [{}], "kwargs": {}},  # a handle never given
                    {"handle": "x"}, {"handle": None, "method": 5},
                    {"handle": served_handle(student), "method": "seen", "args": [{"shapes": 5}], "kwargs": {}}):
        reply = student._serve_callback(message)
        assert reply["ok"] is False and reply["error"]["kind"] in (protocol.PROTOCOL, protocol.EXCEPTION)
    assert type(served) is wire.Handle


def served_handle(student: Student) -> int:
    return next(iter(student._served))


def test_a_call_description_is_parsed_within_bounds():
    assert Seen.parse({"shapes": [[1, 4, 8]], "devices": ["cpu"], "dtypes": ["float32"], "distinct": True}).shapes == ((1, 4, 8),)
    for bad in ({"shapes": 5}, {"shapes": [[2**62]], "devices": ["cpu"], "dtypes": ["float32"], "distinct": True},
                {"shapes": [[1]] * 100, "devices": ["cpu"] * 100, "dtypes": ["f"] * 100, "distinct": True},
                {"shapes": [[1]], "devices": [], "dtypes": [], "distinct": True}, []):
        with pytest.raises(ValueError):
            Seen.parse(bad)


def test_after_the_first_timeout_later_calls_get_a_short_leash_and_one_more_limit_in_all():
    class TimesOutOnce(Scripted):
        def __call__(self, request, seconds, on_callback, warmup=None):
            self.requests.append((wire.decode(request)["op"], seconds))
            if len(self.requests) == 1:
                return wire.encode(protocol.error(protocol.TIMEOUT, "The call did not finish within 10 s."))
            return wire.encode(protocol.ok(1))

    channel = TimesOutOnce()
    clock = Clock(Limits(call_seconds=10, budget_seconds=600, leash_seconds=4))
    student = Student(channel, clock)
    with pytest.raises(StudentError) as first:
        student.call("loops")
    assert "at most 4 s" in first.value.message
    student.call("other")
    assert channel.requests[1][1] <= 4  # the leash
    clock.leash_left = 0.0  # as if later calls had used up the one more limit
    with pytest.raises(StudentError) as spent:
        student.call("third")
    assert spent.value.kind == protocol.BUDGET and "one more time limit" in spent.value.message
    assert len(channel.requests) == 2
