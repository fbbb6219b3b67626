"""Part `masks`: causal and padding masks, and how they are applied.

Every mask here uses True = "may attend", the convention of
`torch.nn.functional.scaled_dot_product_attention`.

This module imports nothing from the rest of the package: the graders inject
it, on its own, into a submission that is graded on another part.
"""

from __future__ import annotations

import torch
from torch import Tensor


def causal_average(T: int) -> Tensor:
    """The causal averaging matrix: each row spreads weight evenly over the past and present."""
    if T < 1:
        raise ValueError(f"T must be at least 1, got {T}")
    allowed = torch.ones(T, T).tril()
    return allowed / allowed.sum(dim=-1, keepdim=True)


def causal_mask(T_q: int, T_k: int | None = None, *, device=None) -> Tensor:
    """Top-left aligned causal mask: query i may see key j iff j <= i (as `is_causal=True`)."""
    T_k = T_q if T_k is None else T_k
    if T_q < 1 or T_k < 1:
        raise ValueError(f"T_q and T_k must be at least 1, got T_q={T_q}, T_k={T_k}")
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril()


def padding_mask(lengths: Tensor, T: int) -> Tensor:
    """(B, T) mask that is True on the real tokens of each right-padded sequence."""
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-D (B,), got shape {tuple(lengths.shape)}")
    if lengths.dtype.is_floating_point or lengths.dtype == torch.bool:
        raise ValueError(f"lengths must hold integers, got dtype {lengths.dtype}")
    if bool((lengths < 1).any()) or bool((lengths > T).any()):
        raise ValueError(f"every length must lie in 1..T={T}, got {lengths.tolist()}")
    positions = torch.arange(T, device=lengths.device)
    return positions < lengths[:, None]


def apply_mask(scores: Tensor, mask: Tensor) -> Tensor:
    """Scores with disallowed entries set to -inf, so that softmax gives them weight 0."""
    if mask.dtype != torch.bool:
        raise ValueError(f"mask must be a boolean tensor (True = may attend), got dtype {mask.dtype}")
    return scores.masked_fill(~mask, float("-inf"))


def combine_masks(causal: Tensor, padding: Tensor) -> Tensor:
    """(B, 1, T, T) mask: a query may attend a key only if both masks allow it.

    Padding hides keys, so it broadcasts along the last (key) dimension.
    """
    if causal.dim() != 2 or padding.dim() != 2:
        raise ValueError(
            f"causal must be (T, T) and padding (B, T), got {tuple(causal.shape)} and {tuple(padding.shape)}"
        )
    if causal.shape[-1] != padding.shape[-1]:
        raise ValueError(f"causal has {causal.shape[-1]} keys but padding has {padding.shape[-1]}")
    return causal[None, None, :, :] & padding[:, None, None, :]
