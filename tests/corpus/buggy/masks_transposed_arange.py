# part: masks
# hint: masks.transposed
# why: arange comparison with rows and columns swapped (j >= i): the upper triangle is allowed

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    rows = torch.arange(T_q, device=device).unsqueeze(1)
    cols = torch.arange(T_k, device=device).unsqueeze(0)
    return cols >= rows
