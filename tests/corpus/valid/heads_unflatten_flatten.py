# part: heads
# why: split with unflatten(-1, (H, -1)), merge with flatten(2)

def split_heads(x, n_heads):
    if x.shape[-1] % n_heads != 0:
        raise ValueError(f"cannot split {x.shape[-1]} features into {n_heads} heads")
    return x.unflatten(-1, (n_heads, -1)).transpose(1, 2)


def merge_heads(x):
    return x.transpose(1, 2).flatten(2)
