# part: masks
# hint: masks.itself
# why: causal_mask uses tril(-1): the diagonal is blocked and query 0 sees no key

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return torch.tril(torch.ones(T_q, T_k, dtype=torch.bool, device=device), diagonal=-1)
