"""Part `heads`: splitting features into heads, merging them back, causal self-attention.

Self-contained (imports only torch and math) so the graders can inject it alone.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def split_heads(x: Tensor, n_heads: int) -> Tensor:
    """(B, T, D) -> (B, H, T, D // H); head h owns features h*dh : (h+1)*dh."""
    if x.dim() != 3:
        raise ValueError(f"x must be (B, T, D), got shape {tuple(x.shape)}")
    B, T, D = x.shape
    if n_heads < 1 or D % n_heads != 0:
        raise ValueError(f"feature size {D} is not divisible by n_heads={n_heads}")
    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    """(B, H, T, dh) -> (B, T, H*dh): the exact inverse of `split_heads`."""
    if x.dim() != 4:
        raise ValueError(f"x must be (B, H, T, dh), got shape {tuple(x.shape)}")
    B, H, T, dh = x.shape
    return x.transpose(1, 2).reshape(B, T, H * dh)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with one fused q|k|v projection and an output projection."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if n_heads < 1 or d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(output (B, T, D), causal attention weights (B, H, T, T))."""
        if x.dim() != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"x must be (B, T, {self.d_model}), got shape {tuple(x.shape)}")
        T = x.shape[1]
        q, k, v = (split_heads(part, self.n_heads) for part in self.qkv(x).split(self.d_model, dim=-1))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        return self.proj(merge_heads(weights @ v)), weights
