# part: positions
# hint: positions.interleaves
# why: fairseq get_embedding layout: float32 exp(arange(half) * -log(base) / half) frequencies, then cat([sin, cos], dim=1).view(T, -1), so PE[0] = [0...0, 1...1]

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError(f"embedding_dim must be even, got {d_model}")
    half_dim = d_model // 2
    emb = math.log(base) / half_dim
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
    emb = torch.arange(T, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
    return torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(T, -1)
