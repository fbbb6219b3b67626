"""tests/gpu/run_on_device.sh, the GPU run of issue 24: without a GPU it runs nothing and says so."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "gpu" / "run_on_device.sh"


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU: the script would run")
def test_without_a_gpu_the_device_script_skips_cleanly(tmp_path):
    run = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "out")], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert "no NVIDIA GPU here" in run.stdout and not any((tmp_path / "out").iterdir())
