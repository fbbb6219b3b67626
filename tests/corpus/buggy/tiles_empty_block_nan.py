# part: tiles
# hint: tiles.empty
# why: block_state subtracts the row max without a guard: a row whose keys are all masked computes exp(-inf - -inf) = NaN

def block_state(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.max(dim=-1).values
    p = torch.exp(scores - m.unsqueeze(-1))
    l = p.sum(dim=-1)
    return m, l, (p @ v) / l.unsqueeze(-1)
