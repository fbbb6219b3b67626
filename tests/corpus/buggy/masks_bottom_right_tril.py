# part: masks
# hint: masks.top_left
# why: causal_mask uses tril(T_k - T_q): bottom-right alignment, wrong whenever T_q != T_k

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril(diagonal=T_k - T_q)
