# part: heads
# hint: heads.split_no_transpose
# why: split_heads uses torch.reshape(x, (B, H, -1, dh)) with no transpose

def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by n_heads={n_heads}")
    return torch.reshape(x, (B, n_heads, -1, D // n_heads))
