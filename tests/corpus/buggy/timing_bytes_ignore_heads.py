# part: timing
# hint: timing.grid_bytes
# why: forgets the n_heads factor

def score_grid_bytes(T, *, n_heads=1, batch=1, dtype=torch.float32):
    itemsize = torch.empty((), dtype=dtype).element_size()
    return batch * T * T * itemsize
