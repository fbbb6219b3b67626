"""Part `scaling`: scores, the 1/sqrt(d) scaling, the masked row softmax and attention.

Self-contained (imports only torch and math) so the graders can inject it alone.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def attention_scores(q: Tensor, k: Tensor) -> Tensor:
    """q kᵀ / sqrt(d), with d the feature (last) dimension of q."""
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share the feature dimension, got {q.shape[-1]} and {k.shape[-1]}")
    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])


def attention_weights(scores: Tensor, mask: Tensor | None = None) -> Tensor:
    """Row softmax over the keys; entries where `mask` is False get weight exactly 0."""
    if mask is not None:
        if mask.dtype != torch.bool:
            raise ValueError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}")
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """(output, weights), the materialised form of `F.scaled_dot_product_attention`."""
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys, got {k.shape[-2]} and {v.shape[-2]}")
    weights = attention_weights(attention_scores(q, k), mask)
    return weights @ v, weights


def materialized_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """Attention that builds the full T_q x T_k grid: the workload of the T² timing study."""
    return scaled_dot_product_attention(q, k, v)[0]


def dot_product_spread(
    d: int, n: int = 10_000, *, scaled: bool, generator: torch.Generator | None = None
) -> float:
    """Std of n dot products of standard-normal d-vectors: about sqrt(d) raw, about 1 scaled."""
    if d < 1 or n < 2:
        raise ValueError(f"need d >= 1 and n >= 2, got d={d}, n={n}")
    a = torch.randn(n, d, generator=generator)
    b = torch.randn(n, d, generator=generator)
    dots = (a * b).sum(dim=-1)
    if scaled:
        dots = dots / math.sqrt(d)
    return dots.std().item()


def softmax_entropy(weights: Tensor) -> Tensor:
    """Entropy in nats of each row; a zero weight adds 0 (0 log 0 = 0)."""
    return -torch.special.xlogy(weights, weights).sum(dim=-1)
