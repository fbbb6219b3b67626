# part: scaling
# why: attention_scores folds the leading axes into one batch and calls torch.baddbmm(empty, q, kᵀ, beta=0, alpha=1/√d)

def attention_scores(q, k):
    *lead, T_q, d = q.shape
    T_k = k.shape[-2]
    q3 = q.reshape(-1, T_q, d)
    k3 = k.reshape(-1, T_k, d)
    out = torch.empty(q3.shape[0], T_q, T_k, dtype=q.dtype, device=q.device)
    out = torch.baddbmm(out, q3, k3.transpose(1, 2), beta=0.0, alpha=1.0 / math.sqrt(d))
    return out.reshape(*lead, T_q, T_k)
