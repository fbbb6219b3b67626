# part: tiles
# why: checks that the batch dimensions of q, k and v broadcast with torch.broadcast_shapes, whose first call imports sympy (some 30 MiB): a library's own import is not memory the call holds

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    T_q, T_k = q.shape[-2], k.shape[-2]
    state = None
    for start in range(0, T_k, block_size):
        if causal and start > T_q - 1:
            break
        mask = None
        if causal:  # query i sees key j when j <= i
            keys = torch.arange(start, min(start + block_size, T_k), device=q.device)
            mask = keys <= torch.arange(T_q, device=q.device).unsqueeze(-1)
        block = block_state(q, k[..., start:start + block_size, :], v[..., start:start + block_size, :], mask)
        state = block if state is None else merge_states(state, block)
    return state[2]
