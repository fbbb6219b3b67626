"""The checks that measure what a call caused (memory held at once, work done) give the same verdict on
every run, idle or beside two busy loops, for code that does the work where the grader looks and for code
that does it elsewhere: a correct tiled_attention, one whose first call imports a library (the import is
not the call's), one that builds the whole grid, one that has the section-2 attention the grader serves
build it, and one that hands it to a helper process it started while loading."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).parent / "corpus"
SECRET = "measured-twice"
RUNS = 10  # the first half idle, the second beside two busy loops
HELPER_PROCESS = '''
import multiprocessing as _mp


def _grid_worker(conn):
    while True:
        q, k, v, mask = conn.recv()
        scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        conn.send(torch.softmax(scores, -1) @ v)


_ours, _theirs = _mp.Pipe()
_mp.get_context("fork").Process(target=_grid_worker, args=(_theirs,), daemon=True).start()


def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError("block_size must be at least 1")
    mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril() if causal else None
    _ours.send((q, k, v, mask))
    return _ours.recv()
'''
# submission -> (its text after base.py, whether the memory check must pass)
SUBMISSIONS = {
    "correct": ("", True),
    "lazy_import": ((CORPUS / "valid" / "tiles_broadcast_shapes.py").read_text(), True),
    "whole_grid": ((CORPUS / "buggy" / "tiles_whole_grid.py").read_text(), False),
    "grid_through_sdpa": ((CORPUS / "buggy" / "tiles_grid_through_sdpa.py").read_text(), False),
    "helper_process": (HELPER_PROCESS, False),
}


def _scores(folder: Path, out: Path) -> dict[str, dict[str, float]]:
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *sorted(map(str, folder.glob("*.py"))),
                          "--out", str(out), "--parts", "tiles", "--quiet"],
                         env={**os.environ, "AUTOGRADER_SECRET": SECRET}, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return {sid: {t["name"]: t["score"] for t in json.loads((out / sid / "results.json").read_text())["tests"]}
            for sid in SUBMISSIONS}


def test_tiles_verdicts_are_the_same_on_every_run(tmp_path):
    base = (CORPUS / "base.py").read_text()
    folder = tmp_path / "subs"
    folder.mkdir()
    for name, (patch, _) in SUBMISSIONS.items():
        (folder / f"{name}.py").write_text(base + "\n\n" + patch)
    seen: list[dict[str, dict[str, float]]] = []
    busy: list[subprocess.Popen] = []
    try:
        for run in range(RUNS):
            if run == RUNS // 2:
                busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
            seen.append(_scores(folder, tmp_path / f"out{run}"))
    finally:
        for loop in busy:
            loop.kill()
            loop.wait()
    for name, (_, holds_little) in SUBMISSIONS.items():
        runs = [s[name] for s in seen]
        assert all(r == runs[0] for r in runs), {name: [sum(r.values()) for r in runs]}
        memory = next(check for check in runs[0] if "at once" in check)
        assert (runs[0][memory] > 0) == holds_little, (name, runs[0])
