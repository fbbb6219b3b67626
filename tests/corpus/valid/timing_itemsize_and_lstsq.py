# part: timing
# why: bytes from dtype.itemsize; the power-law fit by torch.linalg.lstsq on [log T, 1] in float64

def score_grid_bytes(T, *, n_heads=1, batch=1, dtype=torch.float32):
    return int(batch * n_heads * T ** 2 * dtype.itemsize)


def fit_power_law(Ts, times):
    x = torch.log(torch.tensor(Ts, dtype=torch.float64))
    y = torch.log(torch.tensor(times, dtype=torch.float64))
    A = torch.stack([x, torch.ones_like(x)], dim=1)
    solution = torch.linalg.lstsq(A, y.unsqueeze(1)).solution
    return float(solution[0, 0])
