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


def test_the_offline_venv_installs_only_what_the_machines_python_lacks(tmp_path):
    """offline_venv.wanted_wheels: a package the GPU machine's Python has is not installed again, torch never
    is (the machine's CUDA build serves), and a wheel of another version than the lock's is not taken."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("offline_venv", SCRIPT.parent / "offline_venv.py")
    offline = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(offline)
    pins = offline.locked()
    site, wheels = tmp_path / "site", tmp_path / "wheels"
    (site / f"numpy-{pins['numpy']}.dist-info").mkdir(parents=True)
    (site / f"numpy-{pins['numpy']}.dist-info" / "METADATA").write_text(f"Name: numpy\nVersion: {pins['numpy']}\n")
    wheels.mkdir()
    for name in ("numpy", "dask", "torch"):
        (wheels / f"{name}-{pins[name]}-py3-none-any.whl").touch()
    (wheels / "tqdm-0.0.1-py3-none-any.whl").touch()
    chosen, missing = offline.wanted_wheels(site, wheels)
    assert [w.name.split("-")[0] for w in chosen] == ["dask"]
    assert f"tqdm=={pins['tqdm']}" in missing and not any(m.startswith(("numpy==", "torch==")) for m in missing)
