# part: positions
# why: the common float32 form: div = exp(arange(0, d, 2) * (-log(base) / d)), angles = position * div

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 == 1:
        raise ValueError(f"sinusoidal encoding needs an even d_model, got {d_model}")
    position = torch.arange(T).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(base) / d_model))
    pe = torch.zeros(T, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
