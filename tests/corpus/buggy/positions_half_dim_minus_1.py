# part: positions
# hint: positions.exponent
# why: frequencies exp(-log(base) * i / (half_dim - 1)) (tensor2tensor style): the last frequency is 1/base instead of base^(-(d-2)/d)

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    half_dim = d_model // 2
    scale = math.log(base) / (half_dim - 1)
    freqs = torch.exp(torch.arange(half_dim, dtype=torch.float64) * -scale)
    angles = torch.arange(T, dtype=torch.float64)[:, None] * freqs[None, :]
    pe = torch.zeros(T, d_model, dtype=torch.float64)
    pe[:, 0::2] = angles.sin()
    pe[:, 1::2] = angles.cos()
    return pe.float()
