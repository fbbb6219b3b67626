# part: positions
# hint: positions.pairs
# why: exponent i/d with the pair index i, instead of 2i/d: frequencies decay half as fast

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    positions = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    i = torch.arange(d_model // 2, dtype=torch.float64)
    angles = positions / base ** (i / d_model)
    pe = torch.zeros(T, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()
