"""Checks that read the clock never fail a correct submission on a loaded machine: tests/corpus/base.py
passes every check of the timing part, and of the tiles part (whose causal check times causal calls
against full ones), 30 times in a row (30 submissions, so 30 different inputs), with two busy processes
competing for the CPU all the while. (The timing checks compare what the student's timer reports with
what the grader's own clock saw, see autograder/graders/test_timing.py.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).parent / "corpus"
RUNS = 30


@pytest.mark.parametrize("part", ["timing", "tiles"])
def test_a_correct_submission_passes_30_runs_in_a_row_under_load(tmp_path, part):
    subs = tmp_path / "subs"
    subs.mkdir()
    for i in range(RUNS):
        (subs / f"run{i:02d}.py").write_text((CORPUS / "base.py").read_text())
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        run = subprocess.run([sys.executable, "-m", "autograder", "grade", *sorted(map(str, subs.iterdir())),
                              "--out", str(tmp_path / "out"), "--parts", part, "--secret", "stability", "--quiet"],
                             capture_output=True, text=True, timeout=900)
    finally:
        for process in busy:
            process.kill()
            process.wait()
    assert run.returncode == 0, run.stderr[-3000:]
    failures = {}
    for results in sorted((tmp_path / "out").glob("*/results.json")):
        failed = [t for t in json.loads(results.read_text())["tests"] if t["status"] != "passed"]
        if failed:
            failures[results.parent.name] = [f"{t['name']}: {t['output']}" for t in failed]
    assert len(list((tmp_path / "out").glob("*/results.json"))) == RUNS
    assert not failures, failures
