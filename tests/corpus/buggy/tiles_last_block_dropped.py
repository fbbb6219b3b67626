# part: tiles
# hint: tiles.last_block
# why: loops over the T_k // block_size full blocks only, so the keys after the last full block are never seen

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    T_q, T_k = q.shape[-2], k.shape[-2]
    state = None
    for i in range(T_k // block_size):
        start, end = i * block_size, (i + 1) * block_size
        if causal and start >= T_q:
            break
        mask = None
        if causal:
            rows = torch.arange(T_q, device=q.device).unsqueeze(-1)
            mask = torch.arange(start, end, device=q.device) <= rows
        piece = block_state(q, k[..., start:end, :], v[..., start:end, :], mask)
        state = piece if state is None else merge_states(state, piece)
    return state[2]
