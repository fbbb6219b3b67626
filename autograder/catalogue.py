"""Trusted callables that graders hand to a submission's functions, built on its side by name.

`time_call`, `time_attention` and `is_permutation_equivariant` take a function
as an argument. The graders never pass submission objects around; they name
one of these, and the submission's process builds it. Each records what it
was called with, which the graders read back through `report()`.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import torch


class SleepWorkload:
    """Call i takes `durations[i]` seconds (then `default`): a known cost on any machine."""

    def __init__(self, durations: list[float], default: float):
        self.durations = list(durations)
        self.default = default
        self.calls = 0

    def __call__(self, *args: Any) -> None:
        duration = self.durations[self.calls] if self.calls < len(self.durations) else self.default
        self.calls += 1
        time.sleep(duration)

    def report(self) -> dict[str, int]:
        return {"calls": self.calls}


class QuadraticWorkload:
    """Takes `seconds_per_token2 * T²` seconds for inputs of T tokens; records what it was given."""

    def __init__(self, seconds_per_token2: float):
        self.seconds_per_token2 = seconds_per_token2
        self.seen: list[dict[str, Any]] = []
        self._pointers: set[int] = set()

    def __call__(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
        pointers = {t.data_ptr() for t in (q, k, v)}
        self.seen.append({
            "shapes": [list(t.shape) for t in (q, k, v)],
            "devices": [str(t.device) for t in (q, k, v)],
            "dtypes": [str(t.dtype) for t in (q, k, v)],
            "distinct": len(pointers) == 3,
        })
        time.sleep(self.seconds_per_token2 * q.shape[-2] ** 2)

    def report(self) -> list[dict[str, Any]]:
        return self.seen


class CudaSleepWorkload:
    """Queues `seconds` of GPU work and returns at once: only a synchronised timer sees it."""

    def __init__(self, seconds: float):
        self.cycles = int(seconds * _cuda_clock_hz())

    def __call__(self, *args: Any) -> None:
        torch.cuda._sleep(self.cycles)

    def report(self) -> None:
        return None


def _cuda_clock_hz() -> float:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return getattr(props, "clock_rate", 1_500_000) * 1000.0


def materialized_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q kᵀ / √d) v with the whole score grid built: the T² workload."""
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v


def single_thread_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Materialised attention on one CPU thread: on a busy shared machine, waking a thread
    pool costs more than a small grid, which would hide the T² curve."""
    if q.device.type != "cpu":
        return materialized_attention(q, k, v)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return materialized_attention(q, k, v)
    finally:
        torch.set_num_threads(threads)


def self_attention(x: torch.Tensor) -> torch.Tensor:
    """Parameter-free attention of the tokens on each other: permutation-equivariant."""
    return materialized_attention(x, x, x)


def causal_self_attention(x: torch.Tensor) -> torch.Tensor:
    """The same with a causal mask: order matters, so not permutation-equivariant."""
    T = x.shape[-2]
    scores = x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1])
    allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1) @ x


def running_sum(x: torch.Tensor) -> torch.Tensor:
    """Each token plus all before it: depends on order."""
    return x.cumsum(dim=-2)


def doubled(x: torch.Tensor) -> torch.Tensor:
    """Token-wise and so trivially permutation-equivariant."""
    return 2 * x


_FUNCTIONS: dict[str, Callable] = {
    f.__name__: f for f in (materialized_attention, single_thread_attention, self_attention, causal_self_attention, running_sum, doubled)
}
_CLASSES: dict[str, type] = {c.__name__: c for c in (SleepWorkload, QuadraticWorkload, CudaSleepWorkload)}


def build(name: str, *args: Any, **kwargs: Any) -> Any:
    """The catalogue entry `name`: a function as it is, or an instance of a workload class."""
    if name in _FUNCTIONS and not args and not kwargs:
        return _FUNCTIONS[name]
    if name in _CLASSES:
        return _CLASSES[name](*args, **kwargs)
    raise LookupError(f"{name!r} is not in the graders' catalogue")
