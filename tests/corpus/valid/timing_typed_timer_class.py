# part: timing
# why: type-hinted timing with a context-manager timer class that synchronises CUDA on entry and exit, statistics.median over a generator, bytes from torch.finfo(dtype).bits, a closed-form float64 slope

from typing import Any, Callable, Sequence


class CudaAwareTimer:
    """`with CudaAwareTimer() as t: ...` leaves the elapsed wall-clock seconds in t.seconds."""

    def __init__(self) -> None:
        self.seconds: float = 0.0
        self._start: float = 0.0

    @staticmethod
    def _wait() -> None:
        if torch.cuda.is_available():
            torch.cuda.synchronize()

    def __enter__(self) -> "CudaAwareTimer":
        self._wait()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc_info: Any) -> bool:
        self._wait()
        self.seconds = time.perf_counter() - self._start
        return False


def score_grid_bytes(T: int, *, n_heads: int = 1, batch: int = 1, dtype: torch.dtype = torch.float32) -> int:
    return batch * n_heads * T * T * (torch.finfo(dtype).bits // 8)


def time_call(fn: Callable[..., Any], *args: Any, repeats: int = 5, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn(*args)

    def once() -> float:
        with CudaAwareTimer() as timer:
            fn(*args)
        return timer.seconds

    return statistics.median(once() for _ in range(repeats))


def time_attention(attn: Callable[..., Any], Ts: Sequence[int], *, d_head: int = 64, device: str | torch.device = "cpu",
                   repeats: int = 5) -> list[float]:
    return [time_call(attn, *(torch.randn(1, T, d_head, device=device) for _ in range(3)), repeats=repeats) for T in Ts]


def fit_power_law(Ts: Sequence[int], times: Sequence[float]) -> float:
    x = torch.tensor(list(Ts), dtype=torch.float64).log()
    y = torch.tensor(list(times), dtype=torch.float64).log()
    dx, dy = x - x.mean(), y - y.mean()
    return float((dx * dy).sum() / (dx * dx).sum())
