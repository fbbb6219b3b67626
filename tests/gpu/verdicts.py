"""The answer key, the GPU-only mistakes, a fabricated study and a GPU hog, graded with CUDA present and
hidden, check by check.

    .venv/bin/python tests/gpu/verdicts.py OUT [PARTS]      (PARTS as grade's --parts; default: all)

Graded twice, in one `grade` run each: with the GPU, and with CUDA_VISIBLE_DEVICES="". Prints each
submission's part scores in both runs, how long each run took, and every check whose verdict differs.
Exits 1 when the answer key loses a check on the GPU or a check both runs share gets different verdicts
for it; when a corpus `needs: cuda` mistake is not caught on the GPU with its own hint; or when the
fabricated study (times of T², attn never called) passes the GPU's real study. Part of
tests/gpu/run_on_device.sh; not collected by pytest.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
HOG = '''
import torch as _torch
_hoard = []
try:
    while True:
        _hoard.append(_torch.empty(2**30, dtype=_torch.uint8, device="cuda"))
except Exception:
    pass
'''
FABRICATED_STUDY = '''
def time_attention(attn, Ts, *, d_head=64, device="cpu", repeats=5):
    return [1e-4 * (T / Ts[0]) ** 2 for T in Ts]
'''
REAL_STUDY = "timing/time_attention: a real study of materialised attention shows the T² cost"


def header(path: Path) -> dict[str, str]:
    """A corpus variant's `# key: value` lines."""
    found = {}
    for line in path.read_text().splitlines():
        match = re.match(r"# (\w+): (.*)", line)
        if not match:
            break
        found[match[1]] = match[2].strip()
    return found


def grade(subs: Path, out: Path, cuda: bool, parts: list[str]) -> tuple[dict[str, dict], float]:
    """Each submission's results.json, and the run's seconds."""
    env = {**os.environ, "AUTOGRADER_SECRET": "gpu-run"}
    if not cuda:
        env["CUDA_VISIBLE_DEVICES"] = ""
    start = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, sorted(subs.glob("*.py"))), "--out",
                          str(out), "--quiet", *parts], env=env, capture_output=True, text=True, cwd=ROOT, timeout=130)
    seconds = time.monotonic() - start
    if run.returncode != 0:
        print(run.stderr[-3000:])
    return {report.parent.name: json.loads(report.read_text()) for report in out.glob("*/results.json")}, seconds


def part_scores(results: dict) -> str:
    scores: dict[str, list[float]] = {}
    for test in results["tests"]:
        got = scores.setdefault(test["name"].split("/")[0], [0.0, 0.0])
        got[0] += test["score"]
        got[1] += test["max_score"]
    return " ".join(f"{part} {got:g}/{most:g}" for part, (got, most) in scores.items())


def failed(results: dict) -> dict[str, str]:
    """Each failed check's name -> its hint."""
    return {t["name"]: (t.get("extra_data") or {}).get("hint", "") for t in results["tests"] if t["status"] == "failed"}


def main() -> int:
    out = Path(sys.argv[1])
    parts = ["--parts", sys.argv[2]] if len(sys.argv) > 2 else []
    subs = out / "subs"
    subs.mkdir(parents=True, exist_ok=True)
    base = (CORPUS / "base.py").read_text()
    (subs / "correct.py").write_text(base)
    (subs / "fabricated_study.py").write_text(base + "\n\n" + FABRICATED_STUDY)
    (subs / "gpu_hog.py").write_text(base + "\n\n" + HOG)
    gpu_only = {p.stem: header(p) for p in sorted((CORPUS / "buggy").glob("*.py")) if header(p).get("needs") == "cuda"}
    for stem in gpu_only:
        (subs / f"{stem}.py").write_text(base + "\n\n" + (CORPUS / "buggy" / f"{stem}.py").read_text())
    (on_gpu, gpu_seconds), (on_cpu, cpu_seconds) = grade(subs, out / "cuda", True, parts), grade(subs, out / "cpu", False, parts)
    print(f"{len(on_gpu)} submissions graded in {gpu_seconds:.1f} s with CUDA, {len(on_cpu)} in {cpu_seconds:.1f} s "
          "without")
    bad = 0
    for sid in sorted(on_gpu):
        gpu, cpu = on_gpu[sid], on_cpu.get(sid, {"tests": []})
        print(f"{sid}:\n   with CUDA:    {part_scores(gpu)}\n   without CUDA: {part_scores(cpu)}")
        statuses = {t["name"]: t["status"] for t in cpu["tests"]}
        outputs = {t["name"]: " ".join(t.get("output", "").split())[:300] for t in gpu["tests"]}
        for name, hint in sorted(failed(gpu).items()):
            print(f"   failed with CUDA: {name} (hint: {hint or 'none'})")
            if sid == "correct" or hint != gpu_only.get(sid, {}).get("hint"):  # why, where it should not have failed
                print(f"      {outputs[name]}")
        differ = sorted(t["name"] for t in gpu["tests"] if statuses.get(t["name"], t["status"]) != t["status"])
        for name in differ:
            print(f"   differs: {name}")
        if sid == "correct" and (failed(gpu) or differ):
            bad = 1
        if sid in gpu_only and any(t["name"].startswith(gpu_only[sid]["part"] + "/") for t in gpu["tests"]):
            own = gpu_only[sid]
            hints = {h for n, h in failed(gpu).items() if n.startswith(own["part"] + "/")}
            if hints != {own["hint"]}:
                print(f"   NOT CAUGHT AS EXPECTED: want one hint {own['hint']!r} in {own['part']}, got {sorted(hints)}")
                bad = 1
    study = on_gpu.get("fabricated_study", {"tests": []})
    if any(t["name"] == REAL_STUDY for t in study["tests"]) and REAL_STUDY not in failed(study):
        print("fabricated_study: the GPU's real study passed times made up without calling attn")
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
