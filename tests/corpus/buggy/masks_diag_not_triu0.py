# part: masks
# hint: masks.itself
# why: causal_mask is ~triu(0), i.e. strictly below the diagonal: a token cannot see itself

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return ~torch.triu(torch.ones(T_q, T_k, dtype=torch.bool, device=device))
