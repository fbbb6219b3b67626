# part: timing
# hint: timing.grid_bytes
# why: assumes 2 bytes per score whatever the dtype

def score_grid_bytes(T, *, n_heads=1, batch=1, dtype=torch.float32):
    return batch * n_heads * T * T * 2
