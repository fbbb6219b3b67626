"""The pytest plugin, on grader modules written for the test (pytester): results, devices, seeds,
the watchdog, and whose fault a failure is."""

from __future__ import annotations

from autograder.engine import plugin as plugin_module
from autograder.engine.plugin import Current, GradingPlugin
from autograder.isolation.limits import Limits
from autograder.isolation.proxy import Clock, InProcessChannel, Student

SUBMISSION = """
def double(x):
    return 2 * x

def broken(x):
    raise ValueError("nope")

def weird(x):
    return "a string"
"""

GRADER = '''
PART = "demo"
from autograder.engine.checks import check, expect, fail

@check("double: doubles", points=2)
def test_double(student):
    expect(student.call("double", 21) == 42, "double(21)", "42", "something else")

@check("broken: answers", points=1)
def test_broken(student):
    student.call("broken", 1)

@check("weird: a number", points=1)
def test_weird(student):
    value = student.call("weird", 1)
    value + 1  # a TypeError on what the submission returned

@check("grader bug before any reply", points=1)
def test_grader_bug(student):
    {}["missing"]

@check("on {device}", points=1)
def test_devices(student, device):
    assert device == "cpu"

@check("seeded", points=1)
def test_seeded(student, gen):
    import torch
    SEEN.append(torch.randint(0, 10**9, (1,), generator=gen).item())
'''


def run(pytester, grader: str = GRADER, seed: str = "s\\0ada") -> tuple[Current, list]:
    seen: list = []
    plugin = GradingPlugin()
    clock = Clock(Limits(call_seconds=10, budget_seconds=60))

    def open_student(part: str) -> Student:
        student = Student(InProcessChannel(), clock)
        student.load([("submission.py", SUBMISSION)], [])
        return student

    plugin.current = Current(open_student, seed)
    pytester.makepyfile(test_demo=grader.replace("SEEN.append", "__import__('builtins').SEEN.append"))
    import builtins

    builtins.SEEN = seen
    try:
        pytester.runpytest_inprocess("-p", "no:cacheprovider", plugins=[plugin])
    finally:
        del builtins.SEEN
    return plugin.current, seen


def test_results_one_per_check(pytester):
    current, _ = run(pytester)
    results = {name: r for (part, name), r in current.results.items()}
    assert results["double: doubles"].passed and results["double: doubles"].max_score == 2
    broken = results["broken: answers"]
    assert not broken.passed and not broken.internal_error and "raised ValueError: nope" in broken.outputs[0]
    assert results["on cpu"].passed  # one check per device; CUDA adds "[on cuda]" results when present


def test_a_failure_after_the_student_replied_is_theirs_before_it_is_ours(pytester):
    current, _ = run(pytester)
    results = {name: r for (part, name), r in current.results.items()}
    weird = results["weird: a number"]
    assert not weird.passed and not weird.internal_error and "could not be checked" in weird.outputs[0]
    bug = results["grader bug before any reply"]
    assert not bug.passed and bug.internal_error and "Internal grader error" in bug.outputs[0]


def test_inputs_are_seeded_per_student_and_check(pytester):
    _, first = run(pytester, seed="s\\0ada")
    _, again = run(pytester, seed="s\\0ada")
    _, other = run(pytester, seed="s\\0ben")
    assert first == again and first != other


def test_the_watchdog_stops_a_check_that_computes_forever(pytester, monkeypatch):
    monkeypatch.setattr(plugin_module, "WATCHDOG_CPU_SECONDS", 0.3)
    spinning = GRADER + '''
@check("spins", points=1)
def test_spins(student):
    student.call("double", 1)
    while True:
        pass
'''
    current, _ = run(pytester, spinning)
    spins = current.results[("demo", "spins")]
    assert not spins.passed and "stopped after" in spins.outputs[0]


def test_a_check_records_the_option_chosen_and_only_letters_of_the_options(pytester):
    """What `answered` records goes to the check's result afresh for each submission; anything but letters of
    the options is a fault of the grader (an internal error), never data."""
    grader = GRADER + '''
@check("q01: chosen", points=1)
def test_chosen(student, answered):
    answered("c", "b")
    raise AssertionError("wrong")

@check("q02: unanswered", points=1)
def test_unanswered(student, answered):
    answered("", "d")

@check("q03: not a letter", points=1)
def test_not_a_letter(student, answered):
    answered("zz", "b")
'''
    current, _ = run(pytester, grader)
    results = {name: r for (part, name), r in current.results.items()}
    assert (results["q01: chosen"].chosen, results["q01: chosen"].right) == ("c", "b")
    assert not results["q01: chosen"].passed
    assert (results["q02: unanswered"].chosen, results["q02: unanswered"].right) == ("", "d")
    bad = results["q03: not a letter"]
    assert bad.internal_error and (bad.chosen, bad.right) == ("", "")
    assert (results["double: doubles"].chosen, results["double: doubles"].right) == ("", "")
