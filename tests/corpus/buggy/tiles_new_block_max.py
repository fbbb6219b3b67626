# part: tiles
# hint: tiles.running_max
# why: merge_states keeps the new block's max as the running one and rescales the old state to it: exp(m_old - m_new) overflows once an earlier block scored far higher

def merge_states(a, b):
    m_a, l_a, o_a = a
    m_b, l_b, o_b = b
    m = m_b
    weight_a = l_a * torch.exp(m_a - m)
    l = weight_a + l_b
    o = (weight_a.unsqueeze(-1) * o_a + l_b.unsqueeze(-1) * o_b) / l.unsqueeze(-1)
    return m, l, o
