# part: heads
# hint: heads.split_no_transpose
# why: split_heads reshapes straight to (B, H, T, dh), mixing time steps into heads

def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by n_heads={n_heads}")
    return x.reshape(B, n_heads, T, D // n_heads)
