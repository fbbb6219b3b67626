"""On a machine with more work than cores, a call's time limit does not count the time its process
waited for a CPU (isolation.deadline): a correct call that needs 0.15 s of CPU finishes under a 1 s limit
while it gets an eighth of a CPU, and a call that sleeps or loops is still stopped, the loop after at
most three limits; code that loops as it loads is stopped the same way. What was added is told after
the submission is done.

The grader, its sandboxes and seven busy loops share one CPU, in a process of their own. Many loops and
a short computation leave room for the rest of a busy test run on that CPU: the call fits in the
stretched limit while it gets a twentieth of the CPU."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.isolation.deadline import STRETCH

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 1.0
SCRIPT = f"""
import json, os, subprocess, sys, time
os.sched_setaffinity(0, {{min(os.sched_getaffinity(0))}})
loops = []
from autograder.model.submission import public_files, setup_imports
from autograder.isolation.limits import Limits
from autograder.isolation.proxy import Clock, Student, StudentError
from autograder.isolation.sandbox import Loads, SandboxChannel, Zygote

CODE = '''
import time
def spend(seconds):
    start = time.process_time()
    while time.process_time() - start < seconds:
        pass
    return seconds
def nap(seconds):
    time.sleep(seconds)
def loop():
    while True:
        pass
'''
found = {{}}
try:
    zygote = Zygote(Limits(call_seconds={LIMIT}), [], public_files(), setup_imports())
    zygote.wait_ready()
    loops += [subprocess.Popen([sys.executable, "-c", "import os\\nos.setsid()\\nwhile True: pass"]) for _ in range(7)]
    for name, args in [("spend", (0.15,)), ("nap", (1.5,)), ("loop", ()), ("import", ())]:
        loads = Loads(zygote)
        student = Student(SandboxChannel(loads), Clock(Limits(call_seconds={LIMIT}, budget_seconds=100)))
        start = time.monotonic()
        student.load([("cell", "while True: pass" if name == "import" else CODE)])
        error = student.clock.load_failure["kind"] if student.clock.load_failure else ""
        if name != "import":
            start = time.monotonic()
            try:
                student.call(name, *args)
            except StudentError as exc:
                error = exc.kind + ": " + exc.message
        found[name] = {{"seconds": time.monotonic() - start, "error": error}}
        loads.close()
        found[name]["busy"] = loads.busy_seconds
    zygote.close()
finally:
    for process in loops:
        process.kill()
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def calls() -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def test_a_correct_call_is_not_stopped_for_the_time_it_waited(calls):
    assert calls["spend"]["error"] == "", calls["spend"]
    assert calls["spend"]["seconds"] > LIMIT, f"the CPU was not busy enough to show anything: {calls['spend']}"


def test_a_sleeping_call_gets_its_limit_and_no_more(calls):
    assert calls["nap"]["error"].startswith("timeout"), calls["nap"]
    assert calls["nap"]["seconds"] < LIMIT + 1 and calls["nap"]["busy"] < 0.1, calls["nap"]


def test_a_looping_call_is_stopped_within_the_stretch_and_the_result_says_what_was_added(calls):
    loop = calls["loop"]
    assert loop["error"].startswith("timeout") and "waited" in loop["error"], loop
    assert loop["seconds"] < STRETCH * LIMIT + 1, loop
    assert loop["busy"] > 0.5 and loop["busy"] <= (STRETCH - 1) * LIMIT + 0.01, loop


def test_code_that_loops_as_it_loads_is_stopped_within_the_stretch(calls):
    loaded = calls["import"]
    assert loaded["error"] == "timeout", loaded
    assert loaded["seconds"] < STRETCH * LIMIT + 1 and 0.5 < loaded["busy"] <= (STRETCH - 1) * LIMIT + 0.01, loaded
