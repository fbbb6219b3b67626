# part: masks
# hint: masks.convention
# why: causal_mask returns triu(1), True on the blocked future (nn.MultiheadAttention convention)

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return torch.triu(torch.ones(T_q, T_k, dtype=torch.bool, device=device), diagonal=1)
