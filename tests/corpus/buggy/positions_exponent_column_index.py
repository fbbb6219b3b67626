# part: positions
# hint: positions.pairs
# why: every column j uses its own exponent j/d, so each cos column has a different frequency from its sin partner

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    p = torch.arange(T, dtype=torch.float64)[:, None]
    j = torch.arange(d_model, dtype=torch.float64)[None, :]
    angles = p / base ** (j / d_model)
    even = (torch.arange(d_model) % 2 == 0)
    return torch.where(even, torch.sin(angles), torch.cos(angles)).float()
