# part: heads
# hint: heads.merge_no_transpose
# why: merge_heads reshapes (B, H, T, dh) straight to (B, T, D), not the inverse of split_heads

def merge_heads(x):
    B, H, T, dh = x.shape
    return x.reshape(B, T, H * dh)
