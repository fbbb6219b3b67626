# part: tiles
# hint: tiles.log_sum
# why: keeps the log-sum-exp of the scores (m + log l) in the state's middle slot, and merge_states adds them with torch.logaddexp: tiled_attention comes out right, but the states are not SPEC's (m, l, o)

def block_state(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.max(dim=-1).values
    lse = torch.logsumexp(scores, dim=-1)  # -inf for a row that sees no key
    weights = torch.exp(scores - torch.nan_to_num(lse, neginf=0.0).unsqueeze(-1))
    return m, lse, weights @ v


def merge_states(a, b):
    m_a, lse_a, o_a = a
    m_b, lse_b, o_b = b
    lse = torch.logaddexp(lse_a, lse_b)
    lse_safe = torch.nan_to_num(lse, neginf=0.0)
    o = torch.exp(lse_a - lse_safe).unsqueeze(-1) * o_a + torch.exp(lse_b - lse_safe).unsqueeze(-1) * o_b
    return torch.maximum(m_a, m_b), lse, o
