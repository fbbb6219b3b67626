# part: heads
# why: the patch opens with from __future__ import annotations, annotates everything (PEP 604 unions, tuple[...]) and keeps its settings in a @dataclass built inside __init__
from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor


@dataclass(frozen=True)
class HeadConfig:
    d_model: int
    n_heads: int
    max_len: int | None = None

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


def split_heads(x: Tensor, n_heads: int) -> Tensor:
    B, T, D = x.shape
    if D % n_heads:
        raise ValueError(f"d_model={D} is not divisible by n_heads={n_heads}")
    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    B, H, T, dh = x.shape
    return x.transpose(1, 2).reshape(B, T, H * dh)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.config: HeadConfig = HeadConfig(d_model, n_heads)
        self.qkv: nn.Linear = nn.Linear(d_model, 3 * d_model)
        self.proj: nn.Linear = nn.Linear(d_model, d_model)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        T: int = x.shape[1]
        q, k, v = (split_heads(t, self.config.n_heads) for t in self.qkv(x).split(self.config.d_model, dim=-1))
        scores: Tensor = q @ k.transpose(-2, -1) / math.sqrt(self.config.head_dim)
        keep: Tensor = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        weights: Tensor = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
        return self.proj(merge_heads(weights @ v)), weights
