# part: heads
# why: split_heads stacks x.chunk(H, dim=-1) on a new axis 1; merge_heads concatenates the unbound heads along the features

def split_heads(x, n_heads):
    if x.shape[-1] % n_heads:
        raise ValueError(f"last dimension {x.shape[-1]} is not a multiple of n_heads={n_heads}")
    return torch.stack(x.chunk(n_heads, dim=-1), dim=1)


def merge_heads(x):
    return torch.cat(x.unbind(dim=1), dim=-1)
