# part: positions
# hint: positions.sin_even
# why: even columns get cos and odd columns sin, so PE[0] = [1, 0, 1, 0, ...]

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    positions = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = positions / base ** (two_i / d_model)
    pe = torch.zeros(T, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(angles)
    pe[:, 1::2] = torch.sin(angles)
    return pe.float()
