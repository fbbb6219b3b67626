# part: masks
# hint: masks.top_left
# why: aligns the last query with the last key (j <= i + T_k - T_q), as a KV-cache decoder would

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    offset = T_k - T_q
    i = torch.arange(T_q, device=device).view(-1, 1)
    j = torch.arange(T_k, device=device).view(1, -1)
    return j <= i + offset
