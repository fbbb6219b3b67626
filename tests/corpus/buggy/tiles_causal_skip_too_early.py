# part: tiles
# hint: tiles.skip
# why: skips every block that reaches past the last query, although its first keys are still seen: the last rows lose their own keys

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    T_q, T_k = q.shape[-2], k.shape[-2]
    state = None
    for start in range(0, T_k, block_size):
        end = min(start + block_size, T_k)
        if causal and end > T_q:
            break
        mask = None
        if causal:
            rows = torch.arange(T_q, device=q.device).unsqueeze(-1)
            mask = torch.arange(start, end, device=q.device) <= rows
        piece = block_state(q, k[..., start:end, :], v[..., start:end, :], mask)
        state = piece if state is None else merge_states(state, piece)
    return state[2]
