# part: heads
# why: split/merge with reshape + permute(0, 2, 1, 3) instead of view/transpose

def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads:
        raise ValueError(f"d_model ({D}) must be divisible by n_heads ({n_heads})")
    return x.reshape(B, T, n_heads, D // n_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, dh = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, H * dh)
