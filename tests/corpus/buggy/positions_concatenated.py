# part: positions
# hint: positions.interleaves
# why: returns cat([sin, cos]) (tensor2tensor/fairseq layout), so PE[0] = [0...0, 1...1]

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    positions = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = positions / base ** (two_i / d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).float()
