"""A venv for a GPU machine with no network, made with that machine's Python (whose torch sees the GPU).

    BASE_PYTHON tests/gpu/offline_venv.py VENV BASE_SITE WHEELS

The venv reads BASE_SITE (the site folder of that Python's torch) through a .pth file, so the CUDA
build there serves; it installs from WHEELS (tests/gpu/wheels.sh) each package of requirements.lock that
BASE_SITE lacks, at the lock's version, then this project, editable, as `make venv` does. Part of
run_on_device.sh; not collected by pytest.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def normal(name: str) -> str:
    """A distribution's name as wheel files spell it (PEP 503, with underscores)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def locked() -> dict[str, str]:
    """requirements.lock's pins by normal name."""
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        name, _, version = line.partition("==")
        if version:
            pins[normal(name)] = version.strip()
    return pins


def wanted_wheels(base_site: Path, wheels: Path) -> tuple[list[Path], list[str]]:
    """The wheels of the lock's packages that base_site lacks, and the lacking ones with no wheel."""
    have = {normal(d.metadata["Name"]) for d in importlib.metadata.distributions(path=[str(base_site)])}
    files = {normal(f.name.split("-")[0]): f for f in wheels.glob("*.whl")}
    chosen, missing = [], []
    for name, version in locked().items():
        if name in have or name == "torch":
            continue
        wheel = files.get(name)
        if wheel is not None and wheel.name.split("-")[1] == version:
            chosen.append(wheel)
        else:
            missing.append(f"{name}=={version}")
    return chosen, missing


def main() -> int:
    target, base_site, wheels = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    venv.create(target, with_pip=True, clear=True)
    python = target / "bin" / "python"
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "gpu_machine_site.pth").write_text(f"{base_site}\n")
    chosen, missing = wanted_wheels(base_site, wheels)
    print(f"{len(chosen)} packages from {wheels}; not installed (no wheel, and no GPU check imports them): "
          f"{' '.join(missing) or 'none'}")
    pip = [python, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--no-compile"]
    if chosen:
        subprocess.run([*pip, *map(str, chosen)], check=True)
    subprocess.run([*pip, "--no-build-isolation", "-e", str(ROOT)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
