# part: tiles
# why: every block's scores and the running state in float64, cast back to the input's dtype once at the end; the causal loop stops at the last query

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size={block_size}: need at least one key per block")
    T_q, T_k = q.shape[-2], k.shape[-2]
    q64 = q.to(torch.float64)
    state = None
    stop_at = min(T_k, T_q) if causal else T_k
    for start in range(0, stop_at, block_size):
        end = min(start + block_size, T_k)
        mask = None
        if causal:
            mask = torch.arange(T_q, device=q.device)[:, None] >= torch.arange(start, end, device=q.device)
        block = block_state(q64, k[..., start:end, :].to(torch.float64), v[..., start:end, :].to(torch.float64), mask)
        state = block if state is None else merge_states(state, block)
    return state[2].to(q.dtype)
