# part: tiles
# why: the FlashAttention-paper style: tiled_attention keeps a running max, a running sum and an unnormalised accumulator in one loop, rescales them by exp(m_old - m_new) and divides once at the end (block_state and merge_states from base)

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    T_q, T_k = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    m_run = torch.full(q.shape[:-1], float("-inf"), dtype=q.dtype, device=q.device)
    l_run = torch.zeros(q.shape[:-1], dtype=q.dtype, device=q.device)
    acc = torch.zeros(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    last = min(T_k, T_q) if causal else T_k  # causal: no query sees a key at or after T_q
    n_blocks = (last + block_size - 1) // block_size
    for j in range(n_blocks):
        kj = k[..., j * block_size:(j + 1) * block_size, :]
        vj = v[..., j * block_size:(j + 1) * block_size, :]
        s = (q @ kj.transpose(-2, -1)) * scale
        if causal:
            key_pos = torch.arange(j * block_size, j * block_size + kj.shape[-2], device=q.device)
            query_pos = torch.arange(T_q, device=q.device)
            s = s.masked_fill(key_pos[None, :] > query_pos[:, None], float("-inf"))
        m_new = torch.maximum(m_run, s.amax(dim=-1))
        m_use = torch.where(m_new == float("-inf"), torch.zeros_like(m_new), m_new)
        alpha = torch.exp(m_run - m_use)
        p = torch.exp(s - m_use[..., None])
        l_run = alpha * l_run + p.sum(dim=-1)
        acc = alpha[..., None] * acc + p @ vj
        m_run = m_new
    return acc / l_run[..., None]
