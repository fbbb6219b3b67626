# part: masks
# hint: masks.transposed
# why: causal_mask is built as a (T_k, T_q) tril and transposed, so queries see the future instead of the past

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return torch.tril(torch.ones(T_k, T_q, dtype=torch.bool, device=device)).T
