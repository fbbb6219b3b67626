# part: heads
# hint: heads.strided_heads
# why: split_heads uses the (B, T, dh, H) layout while merge_heads is correct: split then merge scrambles the features

def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by n_heads={n_heads}")
    return x.view(B, T, D // n_heads, n_heads).permute(0, 3, 1, 2)
