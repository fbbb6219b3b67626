"""Ctrl-C during a class run: one line says what is kept and how to finish, with no traceback or warning
from any process of the run, and the same command again finishes the class, reusing what was graded
(the run's own earlier results, and an earlier run's)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).parent / "corpus"
STUDENTS = 8


EARLIER = 3  # graded by an earlier run: a run interrupted before its first result still keeps them


def grade_command(paths: list[Path], out: Path) -> list[str]:
    return [sys.executable, "-m", "autograder", "grade", *map(str, paths), "--out", str(out),
            "--secret", "interrupt", "--jobs", "1", "--parts", "masks,scaling"]


def test_ctrl_c_says_what_is_kept_and_the_same_command_finishes(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    for i in range(STUDENTS):
        (subs / f"s{i}.py").write_text((CORPUS / "base.py").read_text())
    paths = sorted(subs.glob("*.py"))
    earlier = subprocess.run(grade_command(paths[:EARLIER], out), capture_output=True, text=True, timeout=600)
    assert earlier.returncode == 0, earlier.stderr[-3000:]
    # as a terminal's Ctrl-C: SIGINT to the run's whole process group, once grading has begun (the quiz line
    # comes just before the first submission goes to a worker)
    run = subprocess.Popen(grade_command(paths, out), stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                           start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for line in run.stderr:
        seen.append(line)
        if line.startswith("quiz:"):
            break
    os.killpg(run.pid, signal.SIGINT)
    stdout, rest = run.communicate(timeout=300)
    stderr = "".join(seen) + rest
    assert run.returncode == 130, stderr
    said = [line for line in stderr.splitlines() if line.strip()]
    assert said[-1].startswith("interrupted: the reports of "), stderr
    assert "Traceback" not in stderr and "Warning" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    kept = int(re.search(r"the reports of (\d+) submission", said[-1]).group(1))
    assert EARLIER <= kept == len(list(out.glob("*/results.json"))) < STUDENTS
    again = subprocess.run(grade_command(paths, out), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert len(list(out.glob("*/results.json"))) == STUDENTS
    assert f"{STUDENTS - kept} submission(s) graded, {kept} reused" in again.stdout, again.stdout[-2000:]
