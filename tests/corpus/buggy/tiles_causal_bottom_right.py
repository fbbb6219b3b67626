# part: tiles
# hint: masks.top_left
# why: aligns the causal mask and the skip bottom-right, as a KV cache does (the queries taken as the last T_q positions: query i sees keys j <= i + T_k - T_q), not top-left

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    T_q, T_k = q.shape[-2], k.shape[-2]
    offset = T_k - T_q  # the queries are the last T_q positions, as with a KV cache
    state = None
    for start in range(0, T_k, block_size):
        if causal and start > T_q - 1 + offset:
            break  # after the last query's position
        end = min(start + block_size, T_k)
        mask = None
        if causal:
            positions = torch.arange(T_q, device=q.device).unsqueeze(-1) + offset
            mask = torch.arange(start, end, device=q.device) <= positions
        piece = block_state(q, k[..., start:end, :], v[..., start:end, :], mask)
        state = piece if state is None else merge_states(state, piece)
    return state[2]
