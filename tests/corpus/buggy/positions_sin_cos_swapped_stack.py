# part: positions
# hint: positions.sin_even
# why: interleaves by stacking (cos, sin) instead of (sin, cos)

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    p = torch.arange(T, dtype=torch.float64)[:, None]
    freqs = base ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = p * freqs
    return torch.stack([angles.cos(), angles.sin()], dim=-1).reshape(T, d_model).float()
