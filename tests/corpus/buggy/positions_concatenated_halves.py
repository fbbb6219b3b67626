# part: positions
# hint: positions.interleaves
# why: writes sin into the first half of the columns and cos into the second half

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    half = d_model // 2
    positions = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    angles = positions / base ** (2 * torch.arange(half, dtype=torch.float64) / d_model)
    pe = torch.empty(T, d_model, dtype=torch.float64)
    pe[:, :half] = angles.sin()
    pe[:, half:] = angles.cos()
    return pe.float()
