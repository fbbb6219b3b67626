# part: positions
# hint: positions.from_zero
# why: positions run 1..T instead of 0..T-1, so PE[0, 0] = sin 1

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    positions = torch.arange(1, T + 1, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = positions / base ** (two_i / d_model)
    pe = torch.zeros(T, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()
