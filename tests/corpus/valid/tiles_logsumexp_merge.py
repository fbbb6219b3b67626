# part: tiles
# why: states kept through log-sum-exp: block_state with torch.logsumexp and an exp(scores - lse) softmax, merge_states with torch.logaddexp, empty rows guarded with torch.where

def block_state(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * q.shape[-1] ** -0.5
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), float("-inf"))
    m = scores.amax(dim=-1)
    lse = torch.logsumexp(scores, dim=-1)  # -inf for a row that sees no key
    empty = torch.isinf(lse)
    l = torch.where(empty, torch.zeros_like(lse), torch.exp(lse - m))
    weights = torch.where(empty[..., None], torch.zeros_like(scores), torch.exp(scores - lse[..., None]))
    return m, l, torch.einsum("...qk,...kv->...qv", weights, v)


def merge_states(a, b):
    (m_a, l_a, o_a), (m_b, l_b, o_b) = a, b
    lse_a, lse_b = m_a + torch.log(l_a), m_b + torch.log(l_b)  # log(0) = -inf for an empty side
    lse = torch.logaddexp(lse_a, lse_b)
    m = torch.maximum(m_a, m_b)
    empty = torch.isinf(lse)
    zero = torch.zeros_like(lse)
    share_a = torch.where(empty, zero, torch.exp(lse_a - lse))
    share_b = torch.where(empty, zero, torch.exp(lse_b - lse))
    o = share_a[..., None] * o_a + share_b[..., None] * o_b
    l = torch.where(empty, zero, torch.exp(lse - m))
    return m, l, o
