# part: tiles
# hint: tiles.normalised
# why: block_state returns the unnormalised sum of exp(score - m) · v as o, while merge_states (base's) expects the normalised output

def block_state(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.max(dim=-1).values
    p = torch.exp(scores - torch.nan_to_num(m, neginf=0.0).unsqueeze(-1))
    return m, p.sum(dim=-1), p @ v
