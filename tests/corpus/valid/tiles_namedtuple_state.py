# part: tiles
# why: a typed NamedTuple for the state, `from __future__ import annotations`, guards with torch.where and nan_to_num, and the causal blocks listed by a helper generator

from __future__ import annotations

from typing import Iterator, NamedTuple, Optional

from torch import Tensor


class SoftmaxState(NamedTuple):
    m: Tensor  # row max of the scores
    l: Tensor  # sum of exp(score - m)
    o: Tensor  # normalised output over the keys seen


def _shift(m: Tensor) -> Tensor:
    return torch.where(torch.isneginf(m), torch.zeros_like(m), m)


def _normalise(total: Tensor, l: Tensor) -> Tensor:
    return torch.nan_to_num(total / l[..., None], nan=0.0)  # an empty row: 0 / 0


def block_state(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor] = None) -> SoftmaxState:
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    m = scores.amax(dim=-1)
    p = (scores - _shift(m).unsqueeze(-1)).exp()
    l = p.sum(-1)
    return SoftmaxState(m, l, _normalise(p @ v, l))


def merge_states(a: SoftmaxState, b: SoftmaxState) -> SoftmaxState:
    a, b = SoftmaxState(*a), SoftmaxState(*b)
    m = torch.maximum(a.m, b.m)
    wa = a.l * (a.m - _shift(m)).exp()
    wb = b.l * (b.m - _shift(m)).exp()
    return SoftmaxState(m, wa + wb, _normalise(wa[..., None] * a.o + wb[..., None] * b.o, wa + wb))


def _blocks(T_q: int, T_k: int, size: int, causal: bool) -> Iterator[tuple[int, int]]:
    for start in range(0, T_k, size):
        if causal and start > T_q - 1:
            return
        yield start, min(start + size, T_k)


def tiled_attention(q: Tensor, k: Tensor, v: Tensor, block_size: int = 128, *, causal: bool = False) -> Tensor:
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1 (got {block_size})")
    T_q = q.size(-2)
    state: Optional[SoftmaxState] = None
    for start, stop in _blocks(T_q, k.size(-2), block_size, causal):
        mask = (torch.arange(T_q, device=q.device)[:, None] >= torch.arange(start, stop, device=q.device)) if causal else None
        block = block_state(q, k[..., start:stop, :], v[..., start:stop, :], mask)
        state = block if state is None else merge_states(state, block)
    return state.o


def tiled_score_bytes(T_q: int, block_size: int, *, n_heads: int = 1, batch: int = 1,
                      dtype: torch.dtype = torch.float32) -> int:
    return batch * n_heads * T_q * block_size * dtype.itemsize
