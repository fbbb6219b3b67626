# part: heads
# why: split/merge heads with einops.rearrange (the pattern names the axes), as much public attention code does
from einops import rearrange


def split_heads(x, n_heads):
    if x.shape[-1] % n_heads:
        raise ValueError(f"d_model ({x.shape[-1]}) must be divisible by n_heads ({n_heads})")
    return rearrange(x, "b t (h d) -> b h t d", h=n_heads)


def merge_heads(x):
    return rearrange(x, "b h t d -> b t (h d)")
