# part: heads
# hint: heads.contiguous
# why: merge_heads permutes then .view(B, T, -1): the permuted tensor is not viewable, RuntimeError

def merge_heads(x):
    B = x.shape[0]
    T = x.shape[2]
    return x.permute(0, 2, 1, 3).view(B, T, -1)
