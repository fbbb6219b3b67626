# part: timing
# hint: timing.grid_bytes
# why: forgets the batch factor

def score_grid_bytes(T, *, n_heads=1, batch=1, dtype=torch.float32):
    return n_heads * T * T * torch.finfo(dtype).bits // 8
