# part: masks
# hint: masks.top_left
# why: rolling-KV-cache alignment: with fewer keys than queries the keys are taken as the most recent positions (key j at position j + T_q - T_k); wrong only when T_q > T_k

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    evicted = max(T_q - T_k, 0)
    query_pos = torch.arange(T_q, device=device)
    key_pos = torch.arange(T_k, device=device) + evicted
    return key_pos.unsqueeze(0) <= query_pos.unsqueeze(1)
