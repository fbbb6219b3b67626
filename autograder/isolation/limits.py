"""What one sandbox (one part of one submission) may use. Imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass


# All calls into one submission together: half of Gradescope's default 10 minutes, so that a run that
# grades one upload (start-up, reports) always ends in time. Honest submissions take seconds; after a
# first timeout the leash (proxy.Clock) ends a looping one within about two call limits, far below this.
BUDGET_SECONDS = 300.0


@dataclass(frozen=True)
class Limits:
    call_seconds: float = 60.0
    cpu_seconds: int = 300
    memory_bytes: int = 4 * 2**30  # on top of what the interpreter and torch already map
    file_bytes: int = 16 * 2**20
    processes: int = 256
    scratch_bytes: int = 64 * 2**20  # all files together in the private /tmp (it is memory)
    # The share of each GPU's memory one sandbox's allocator may hold, so that one cannot starve the others
    # or the grader's own CUDA reference (PyTorch's allocator limit: code that bypasses torch is not bound).
    gpu_memory_fraction: float = 0.125
