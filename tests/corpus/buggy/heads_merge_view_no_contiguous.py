# part: heads
# hint: heads.contiguous
# why: merge_heads calls .view on the transposed tensor: RuntimeError for any contiguous (B, H, T, dh) input with T > 1

def merge_heads(x):
    B, H, T, dh = x.shape
    return x.transpose(1, 2).view(B, T, H * dh)
