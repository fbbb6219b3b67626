# part: heads
# hint: heads.strided_heads
# why: split views features as (dh, H), so head h gets the strided features h, h+H, ...; merge is its consistent inverse (lossless, causal, but not the contract's heads)

def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError("d_model must be divisible by n_heads")
    return x.reshape(B, T, D // n_heads, n_heads).permute(0, 3, 1, 2)


def merge_heads(x):
    B, H, T, dh = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, dh * H)
