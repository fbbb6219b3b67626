# part: positions
# hint: positions.angles_in_float
# why: angles computed and passed to sin/cos in float16: errors of 1e-2 and more once positions pass a few dozen

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    position = torch.arange(T, dtype=torch.float16).unsqueeze(1)
    inv_freq = (1.0 / base ** (torch.arange(0, d_model, 2).float() / d_model)).half()
    angles = position * inv_freq
    pe = torch.zeros(T, d_model, dtype=torch.float16)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()
