"""tiles' clock check compares a causal call with a full one on one clock, never one on each."""

from __future__ import annotations

from autograder.graders.test_tiles import _on_one_clock


def test_calls_the_kernel_counted_are_compared_on_cpu_time():
    times, clock = _on_one_clock([{False: (0.010, 0.030), True: (0.004, 0.020)}])
    assert clock == "CPU time" and times == [{False: 0.010, True: 0.004}]


def test_one_call_without_a_count_puts_every_call_on_the_wall_clock():
    """A process gone before its count was read (it ended itself after replying) must not set its full call's
    wall time against the causal call's CPU time."""
    rounds = [{False: (0.010, 0.030), True: (0.004, 0.020)}, {True: (0.020, 0.021), False: (None, 1.0)}]
    times, clock = _on_one_clock(rounds)
    assert clock == "wall time" and times == [{False: 0.030, True: 0.020}, {True: 0.021, False: 1.0}]
