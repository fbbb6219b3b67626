# part: heads
# hint: heads.merge_no_transpose
# why: merge_heads makes the tensor contiguous and views it as (B, T, -1) without moving the head axis back

def merge_heads(x):
    B, H, T, dh = x.shape
    return x.contiguous().view(B, T, -1)
