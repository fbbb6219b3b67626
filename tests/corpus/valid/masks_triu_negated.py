# part: masks
# why: causal mask as the negation of the strictly-upper triangle (~triu(1)), which equals tril(0)

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return ~torch.ones(T_q, T_k, dtype=torch.bool, device=device).triu(diagonal=1)
