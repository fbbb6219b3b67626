# part: tiles
# hint: scaling.no_scale
# why: block_state divides the scores by the square root of the number of keys in the block, not of the feature size

def block_state(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.max(dim=-1).values
    p = torch.exp(scores - torch.nan_to_num(m, neginf=0.0).unsqueeze(-1))
    l = p.sum(dim=-1)
    return m, l, (p @ v) / l.clamp(min=1.0).unsqueeze(-1)
