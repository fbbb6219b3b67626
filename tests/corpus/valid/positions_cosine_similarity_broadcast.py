# part: positions
# why: similarity via F.cosine_similarity with broadcasting; add_positions builds the encoding straight on x's device

def position_similarity(pe):
    return F.cosine_similarity(pe.unsqueeze(1), pe.unsqueeze(0), dim=-1)


def add_positions(x):
    pe = sinusoidal_encoding(x.shape[1], x.shape[2])
    return x + pe.to(x.device).type(x.dtype)
