# part: masks
# hint: masks.off_by_one
# why: arange comparison j <= i + 1 lets every query peek one token ahead

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    i = torch.arange(T_q, device=device)[:, None]
    j = torch.arange(T_k, device=device)[None, :]
    return j <= i + 1
