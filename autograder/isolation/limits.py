"""What one sandbox (one part of one submission) may use. Imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    call_seconds: float = 60.0
    cpu_seconds: int = 300
    memory_bytes: int = 4 * 2**30  # on top of what the interpreter and torch already map
    file_bytes: int = 16 * 2**20
    processes: int = 256
    scratch_bytes: int = 64 * 2**20  # all files together in the private /tmp (it is memory)
