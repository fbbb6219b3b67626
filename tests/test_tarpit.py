"""One bad submission costs the class about one timeout (the sandbox's worst-case promise), through the command line.

The tarpit of tests/adversarial/tarpit.py (loops at import, in causal_mask, in causal_mask ignoring
SIGTERM) with --timeout 3, one job, so that each submission's own seconds show; and a per-submission
--budget that stops a submission whose every call is slow but within the timeout. For the manual
measurement at --timeout 10: `.venv/bin/python tests/adversarial/tarpit.py --timeout 10`.
"""

from __future__ import annotations

import os

import pytest

from adversarial import tarpit

pytestmark = pytest.mark.slow

TIMEOUT = 3
PARTS = ("masks", "scaling", "heads", "positions", "tiles", "quiz")  # timing's real study would only add honest work
BUDGET = 6
SLOW_EVERYWHERE = f"""
import time as _time

_honest = {{name: globals()[name] for name in ("causal_average", "causal_mask", "padding_mask", "apply_mask", "combine_masks")}}


def _slow(name):
    def call(*args, **kwargs):
        _time.sleep({TIMEOUT / 2})  # within the timeout: no single call is ever stopped
        return _honest[name](*args, **kwargs)
    return call


for _name in _honest:
    globals()[_name] = _slow(_name)
"""


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def test_a_looping_submission_costs_about_one_timeout(tmp_path):
    """Each looper is graded with its right scores (nothing at all for the loop at import; base.py's score
    apart from causal_mask for the others) in what base.py takes plus about one timeout: its load is not
    retried per part, a name that timed out is not called again, and a reload gets no time limit of its own."""
    result = tarpit.grade(tarpit.write_class(tmp_path / "subs"), tmp_path / "out", TIMEOUT, PARTS, jobs=1, env=_env(),
                          wall=900)
    assert result["returncode"] == 0, result["stderr"][-3000:]
    assert tarpit.wrong_scores(result["reports"]) == {}
    each = result["each"]
    assert all(each[sid] >= 0.9 * TIMEOUT for sid in tarpit.LOOPERS), \
        f"a looper cost less than one timeout: are reports still written as each submission is done? {each}"
    # each one's own grading time, by the grader (the queue and the start-up apart)
    seconds = {sid: report["own_seconds"] for sid, report in result["reports"].items()}
    honest = seconds["base_again"]
    slow = {sid: f"{seconds[sid]:.1f} s, over {tarpit.looper_bound(honest, TIMEOUT):.1f} s"
            for sid in tarpit.LOOPERS if seconds[sid] > tarpit.looper_bound(honest, TIMEOUT)}
    assert not slow, f"base.py took {honest:.1f} s; at --timeout {TIMEOUT}: {slow}"


def test_a_slow_import_and_every_function_looping_cost_about_two_timeouts(tmp_path):
    """The import (95 % of the timeout) is paid once for every part; the first looping call costs a
    timeout, and every later call together one more (the leash): nothing scored, no grader error."""
    path = tmp_path / "slow_import_everything_loops.py"
    path.write_text(tarpit.slow_import_everything_loops(TIMEOUT))
    result = tarpit.grade([path], tmp_path / "out", TIMEOUT, tarpit.ALL_PARTS, jobs=1, env=_env(), wall=600)
    assert result["returncode"] == 0, result["stderr"][-3000:]
    report = result["reports"]["slow_import_everything_loops"]
    assert not report["row"]["status"].startswith("grader error"), report["row"]
    assert sum(t["score"] for t in report["tests"]) == 0
    assert report["own_seconds"] < tarpit.everything_loops_bound(TIMEOUT), report["own_seconds"]
    leashed = [t["output"] for t in report["tests"] if "timed out" in t["output"] or "one more time limit" in t["output"]]
    assert leashed, [t["output"] for t in report["tests"]][:5]


def test_a_budget_stops_a_submission_whose_every_call_is_slow(tmp_path):
    """Every call takes half the timeout, so none is ever stopped: --budget bounds the whole submission, and
    the checks it leaves are failed with "not run" in their feedback; base.py beside it loses nothing."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "base.py").write_text(tarpit.BASE)
    (subs / "slow_everywhere.py").write_text(tarpit.BASE + "\n" + SLOW_EVERYWHERE)
    result = tarpit.grade([subs / "base.py", subs / "slow_everywhere.py"], tmp_path / "out", TIMEOUT, ("masks",),
                          jobs=1, env=_env(), extra=["--budget", str(BUDGET)], wall=600)
    assert result["returncode"] == 0, result["stderr"][-3000:]
    reports = result["reports"]
    assert all(t["score"] == t["max_score"] for t in reports["base"]["tests"]), reports["base"]["tests"]
    slow = reports["slow_everywhere"]["tests"]
    not_run = [t for t in slow if "not run" in t["output"].lower()]
    assert not_run, [t["output"] for t in slow]
    assert all(t["status"] == "failed" and t["score"] == 0 for t in not_run), not_run
    assert not reports["slow_everywhere"]["row"]["status"].startswith("grader error"), reports["slow_everywhere"]["row"]
    # its own grading time (start-up and the queue apart): the budget, then at most the call under way
    seconds = reports["slow_everywhere"]["seconds"]
    assert BUDGET - 1 < seconds < BUDGET + TIMEOUT + 5, seconds
