"""tiles' work check compares the calls with the grader's yardstick on one clock, never one on each."""

from __future__ import annotations

from autograder.graders.test_tiles import _on_one_clock


def test_calls_the_kernel_counted_are_compared_on_cpu_time():
    (calls, yardsticks), clock = _on_one_clock([((0.004, 0.020), (0.003, 0.010))])
    assert clock == "CPU time" and calls == [0.004] and yardsticks == [0.003]


def test_one_call_without_a_count_puts_every_time_on_the_wall_clock():
    """A process gone before its count was read (it ended itself after replying) must not set its wall time
    against the yardstick's CPU time."""
    rounds = [((0.004, 0.020), (0.003, 0.010)), ((None, 1.0), (0.003, 0.012))]
    (calls, yardsticks), clock = _on_one_clock(rounds)
    assert clock == "wall time" and calls == [0.020, 1.0] and yardsticks == [0.010, 0.012]
