# part: heads
# why: view + transpose, with .contiguous() before the merging view

def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError("d_model must be divisible by n_heads")
    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x):
    B, H, T, dh = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, H * dh)
