"""A correct, a buggy and a hostile submission graded with CUDA present and with CUDA hidden, check by check.

    .venv/bin/python tests/gpu/verdicts.py OUT

The buggy one times without synchronising (timing_no_synchronize), so the GPU T² study of a correct timer
and of one without synchronise are both in it; the hostile one tries to hold most of the GPU in its
sandbox. Prints each check whose verdict differs between the two runs and exits 1 when the correct
submission loses a check, or when a check both runs share gets different verdicts for the correct one.
Part of tests/gpu/run_on_device.sh; not collected by pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
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


def grade(subs: Path, out: Path, cuda: bool) -> dict[str, dict[str, str]]:
    env = {**os.environ, "AUTOGRADER_SECRET": "gpu-run"}
    if not cuda:
        env["CUDA_VISIBLE_DEVICES"] = ""
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, sorted(subs.glob("*.py"))), "--out",
                          str(out), "--quiet"], env=env, capture_output=True, text=True, cwd=ROOT, timeout=280)
    if run.returncode != 0:
        print(run.stderr[-3000:])
    found = {}
    for report in out.glob("*/results.json"):
        found[report.parent.name] = {t["name"]: t["status"] for t in json.loads(report.read_text())["tests"]}
    return found


def main() -> int:
    out = Path(sys.argv[1])
    subs = out / "subs"
    subs.mkdir(parents=True, exist_ok=True)
    base = (CORPUS / "base.py").read_text()
    (subs / "correct.py").write_text(base)
    (subs / "no_sync.py").write_text(base + "\n\n" + (CORPUS / "buggy" / "timing_no_synchronize.py").read_text())
    (subs / "gpu_hog.py").write_text(base + "\n\n" + HOG)
    on_gpu, on_cpu = grade(subs, out / "cuda", True), grade(subs, out / "cpu", False)
    bad = 0
    for sid in sorted(on_gpu):
        gpu, cpu = on_gpu[sid], on_cpu.get(sid, {})
        lost = sorted(n for n, status in gpu.items() if status == "failed")
        print(f"{sid}: {len(gpu)} checks with CUDA ({len(lost)} failed), {len(cpu)} without")
        for name in lost:
            print(f"   failed with CUDA: {name}")
        differ = sorted(n for n in set(gpu) & set(cpu) if gpu[n] != cpu[n])
        for name in differ:
            print(f"   CUDA {gpu[name]}, CPU {cpu[name]}: {name}")
        if sid == "correct" and (lost or differ):
            bad = 1
    if "no_sync" in on_gpu and not any(s == "failed" and n.startswith("timing/") for n, s in on_gpu["no_sync"].items()):
        print("no_sync: no timing check failed with CUDA (a timer without synchronise must)")
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
