# part: positions
# hint: positions.angles_in_float
# why: the exponent 2*i // d_model is integer (floor) division, so it is 0 and every pair has frequency 1

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    positions = torch.arange(T).unsqueeze(1)
    i = torch.arange(d_model // 2)
    angles = positions / base ** (2 * i // d_model)
    pe = torch.zeros(T, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe
