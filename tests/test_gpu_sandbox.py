"""What a submission can do to a GPU it shares: nothing beyond its share. Runs where CUDA is present.

A sandbox's allocator holds at most its share of each GPU's memory (`Limits.gpu_memory_fraction`),
so one submission cannot starve the others or the grader's own CUDA reference; and the GPU timing
study is judged by the calls the grader counted, so times made up without calling `attn` fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
BASE = ROOT / "tests" / "corpus" / "base.py"

pytestmark = [pytest.mark.cuda, pytest.mark.slow,  # grading runs through `python -m autograder`
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def _grade(tmp_path: Path, name: str, patch: str, parts: str) -> dict:
    submission = tmp_path / f"{name}.py"
    submission.write_text(BASE.read_text() + "\n\n" + patch)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", str(submission), "--out", str(out), "--parts",
                          parts, "--jobs", "1", "--quiet"], capture_output=True, text=True, cwd=ROOT,
                         env={**os.environ, "AUTOGRADER_SECRET": "gpu"}, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return {t["name"]: t for t in json.loads((out / name / "results.json").read_text())["tests"]}


HOG = '''
_real_causal_mask = causal_mask


def causal_mask(T_q, T_k=None, *, device=None):
    if device is not None and str(device).startswith("cuda"):
        free, total = torch.cuda.mem_get_info()
        _HOARD.append(torch.empty(int(total * 0.8), dtype=torch.uint8, device=device))  # most of the GPU
    return _real_causal_mask(T_q, T_k, device=device)


_HOARD = []
'''


def test_a_sandbox_cannot_hold_most_of_a_gpu(tmp_path):
    """The hoarding call fails in its sandbox (beyond its share); the other checks, the CUDA ones among
    them, are graded as base.py's."""
    tests = _grade(tmp_path, "hoarder", HOG, "masks")
    on_cuda = [t for n, t in tests.items() if "causal_mask" in n and "device" in n]
    assert on_cuda and all(t["status"] == "failed" for t in on_cuda), on_cuda
    others = [t for n, t in tests.items() if "padding_mask" in n or "combine_masks" in n]
    assert others and all(t["status"] == "passed" for t in others), others


MADE_UP = '''
def time_attention(attn, Ts, *, d_head=64, device="cpu", repeats=5):
    import time as _time

    _time.sleep(sum(4e-11 * T * T * d_head for T in Ts) * 3)  # the time real work would take, spent idle
    return [4e-11 * T * T * d_head for T in Ts]
'''


def test_a_gpu_study_that_never_calls_attn_fails(tmp_path):
    tests = _grade(tmp_path, "made_up", MADE_UP, "timing")
    real = tests["timing/time_attention: a real study of materialised attention shows the T² cost"]
    assert real["status"] == "failed" and "called attn" in real["output"], real["output"]
