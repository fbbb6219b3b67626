# part: masks
# hint: masks.off_by_one
# why: causal_mask uses tril(1): query i also sees the next key i+1

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril(1)
