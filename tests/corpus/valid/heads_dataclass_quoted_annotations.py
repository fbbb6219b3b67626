# part: heads
# why: a @dataclass config whose optional field is annotated with a quoted "int | None" (a string annotation, as every annotation is under from __future__ import annotations); the module, defined first, builds it in __init__

from dataclasses import dataclass


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        cfg = AttentionConfig(d_model=d_model, n_heads=n_heads)
        if cfg.d_model % cfg.n_heads:
            raise ValueError(f"d_model={cfg.d_model} is not divisible by n_heads={cfg.n_heads}")
        self.cfg = cfg
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x):
        B, T, D = x.shape
        H = self.cfg.n_heads
        q, k, v = [split_heads(t, H) for t in self.qkv(x).split(D, dim=-1)]
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)
        scores = scores.masked_fill(~causal_mask(T, device=x.device), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.proj(merge_heads(weights @ v)), weights


@dataclass
class AttentionConfig:
    d_model: int
    n_heads: int
    max_len: "int | None" = None
