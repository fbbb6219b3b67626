"""Part `timing`: the memory of the score grids and a timer that measures attention's T² cost.

Self-contained (imports only torch, math, statistics, time) so the graders can inject it alone.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Callable, Sequence

import torch


def score_grid_bytes(T: int, *, n_heads: int = 1, batch: int = 1, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of the materialised T x T score grids: B * H * T² * itemsize."""
    if T < 1 or n_heads < 1 or batch < 1:
        raise ValueError(f"T, n_heads and batch must be at least 1, got T={T}, n_heads={n_heads}, batch={batch}")
    itemsize = torch.empty(0, dtype=dtype).element_size()
    return batch * n_heads * T * T * itemsize


def _synchronize() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def time_call(fn: Callable, *args, repeats: int = 5, warmup: int = 1) -> float:
    """Median wall-clock seconds of fn(*args), after untimed warm-up calls.

    The median ignores the odd slow call; synchronising makes GPU work count.
    """
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got repeats={repeats}, warmup={warmup}")
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        _synchronize()
        start = time.perf_counter()
        fn(*args)
        _synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def time_attention(
    attn: Callable, Ts: Sequence[int], *, d_head: int = 64, device="cpu", repeats: int = 5
) -> list[float]:
    """Median time of attn(q, k, v) for fresh random (1, T, d_head) inputs, one per T."""
    times = []
    for T in Ts:
        q, k, v = (torch.randn(1, T, d_head, device=device) for _ in range(3))
        times.append(time_call(attn, q, k, v, repeats=repeats))
    return times


def fit_power_law(Ts: Sequence[float], times: Sequence[float]) -> float:
    """Least-squares slope of log(time) against log(T): the exponent p in time ~ T^p."""
    if len(Ts) != len(times) or len(Ts) < 2:
        raise ValueError(f"need at least two (T, time) pairs of equal length, got {len(Ts)} and {len(times)}")
    if min(Ts) <= 0 or min(times) <= 0:
        raise ValueError("every T and every time must be positive to take logs")
    xs = [math.log(t) for t in Ts]
    ys = [math.log(t) for t in times]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        raise ValueError("all T are equal: the slope is undefined")
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
