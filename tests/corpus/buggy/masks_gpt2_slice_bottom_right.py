# part: masks
# hint: masks.top_left
# why: GPT-2 cache style: rows [n - T_q : n] and columns [:T_k] of a square tril of size n = max(T_q, T_k), so the last query meets the last key; wrong only when T_q < T_k

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    n = max(T_q, T_k)
    full = torch.ones(n, n, dtype=torch.bool, device=device).tril()
    return full[n - T_q : n, :T_k]
