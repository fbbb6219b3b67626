"""Trusted callables that graders hand to a submission's functions, built on its side by name.

`time_call`, `time_attention` and `is_permutation_equivariant` take a function
as an argument. The graders never pass submission objects around; they name
one of these, and the submission's process builds it. Workloads whose cost and
call records the graders rely on are `Remote`: the grader serves each call.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch


class Remote:
    """A callable whose calls are served by the grader (a `callback` message each): what the call
    costs and what is recorded of it live in the grading process, out of the submission's reach.
    It tells the grader only what it was called with: shapes, devices and dtypes of tensors."""

    def __init__(self, handle: int, call_back: Callable[[dict], Any]):
        self._handle = handle
        self._call_back = call_back

    def __call__(self, *args: Any) -> None:
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        self._call_back({"op": "callback", "handle": self._handle, "args": {
            "shapes": [list(t.shape) for t in tensors],
            "devices": [str(t.device) for t in tensors],
            "dtypes": [str(t.dtype) for t in tensors],
            "distinct": len({t.data_ptr() for t in tensors}) == len(tensors),
        }})


class CudaSleepWorkload:
    """Queues `seconds` of GPU work and returns at once: only a synchronised timer sees it."""

    def __init__(self, seconds: float):
        self.cycles = int(seconds * _cuda_clock_hz())

    def __call__(self, *args: Any) -> None:
        torch.cuda._sleep(self.cycles)


def _cuda_clock_hz() -> float:
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return getattr(props, "clock_rate", 1_500_000) * 1000.0


def materialized_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q kᵀ / √d) v with the whole score grid built: the T² workload."""
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v


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
    f.__name__: f for f in (materialized_attention, self_attention, causal_self_attention, running_sum, doubled)
}
_CLASSES: dict[str, type] = {c.__name__: c for c in (CudaSleepWorkload,)}


def build(name: str, *args: Any, **kwargs: Any) -> Any:
    """The catalogue entry `name`: a function as it is, or an instance of a workload class."""
    if name in _FUNCTIONS and not args and not kwargs:
        return _FUNCTIONS[name]
    if name in _CLASSES:
        return _CLASSES[name](*args, **kwargs)
    raise LookupError(f"{name!r} is not in the graders' catalogue")
