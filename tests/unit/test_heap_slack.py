"""An exact memory cap: free heap that earlier work left behind does not serve the capped code.

Each case runs in a process of its own (the allocator's settings are the whole process's). The heap is
left with 48 MiB free inside it, the way torch's tensors leave it once glibc has raised its threshold
for mapping large allocations on their own; then a cap of 8 MiB on top of the address space."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import sys, torch
from autograder.isolation import confinement
torch.set_num_threads(1)  # as in a sandbox: no thread stacks to map under the cap
big = torch.empty(24 * 2**20, dtype=torch.uint8); del big  # freed: glibc now serves up to 24 MiB from the heap
held = [torch.empty(2**20, dtype=torch.uint8) for _ in range(48)]
pin = torch.empty(2**20, dtype=torch.uint8)  # keeps the 48 MiB below it inside the heap once freed
del held
if sys.argv[1] == "exact":
    confinement.without_heap_slack()
confinement.cap_memory(8 * 2**20)
for mib in (16, 5, 5, 5):
    try:
        torch.ones(mib * 2**20, dtype=torch.uint8)
        print(mib, "fits")
    except RuntimeError:
        print(mib, "refused")
"""


def _allocations(mode: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_an_exact_cap_refuses_what_the_free_heap_would_have_held_and_grants_what_fits():
    assert _allocations("exact") == ["16 refused", "5 fits", "5 fits", "5 fits"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_without_it_the_free_heap_holds_what_the_cap_should_refuse():
    """Why it is needed: the same 16 MiB fit under the plain cap."""
    assert _allocations("plain")[0] == "16 fits"
