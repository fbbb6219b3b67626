# part: positions
# why: interleaves by stacking (sin, cos) on a new last axis and flattening; float64 angles

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2:
        raise ValueError("d_model must be even")
    p = torch.arange(T, dtype=torch.float64)[:, None]
    i = torch.arange(d_model // 2, dtype=torch.float64)[None, :]
    angles = p / torch.pow(torch.tensor(base, dtype=torch.float64), 2 * i / d_model)
    pe = torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).reshape(T, d_model)
    return pe.to(torch.float32)
