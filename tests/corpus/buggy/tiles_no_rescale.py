# part: tiles
# hint: tiles.rescale
# why: merge_states rescales only the new state to the common max: the old sum and output stay as they were, wrong whenever a later block has a larger score

def merge_states(a, b):
    m_a, l_a, o_a = a
    m_b, l_b, o_b = b
    m = torch.maximum(m_a, m_b)
    weight_b = l_b * torch.exp(m_b - torch.nan_to_num(m, neginf=0.0))
    l = l_a + weight_b
    o = (l_a.unsqueeze(-1) * o_a + weight_b.unsqueeze(-1) * o_b) / l.clamp(min=1.0).unsqueeze(-1)
    return m, l, o
