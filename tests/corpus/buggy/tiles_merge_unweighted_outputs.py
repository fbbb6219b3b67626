# part: tiles
# hint: tiles.normalised
# why: merge_states treats each o as an unnormalised sum, weighting it by exp(m - m_new) alone, then divides by the merged l

def merge_states(a, b):
    m_a, l_a, o_a = a
    m_b, l_b, o_b = b
    m = torch.maximum(m_a, m_b)
    m_safe = torch.nan_to_num(m, neginf=0.0)
    alpha, beta = torch.exp(m_a - m_safe), torch.exp(m_b - m_safe)
    l = l_a * alpha + l_b * beta
    o = (alpha.unsqueeze(-1) * o_a + beta.unsqueeze(-1) * o_b) / l.clamp(min=1.0).unsqueeze(-1)
    return m, l, o
