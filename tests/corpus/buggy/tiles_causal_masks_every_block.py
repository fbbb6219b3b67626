# part: tiles
# hint: tiles.skip
# why: computes every block and masks it, even those after the last query: right values, no saving

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    T_q, T_k = q.shape[-2], k.shape[-2]
    state = None
    for start in range(0, T_k, block_size):
        end = min(start + block_size, T_k)
        mask = None
        if causal:
            rows = torch.arange(T_q, device=q.device).unsqueeze(-1)
            mask = torch.arange(start, end, device=q.device) <= rows
        piece = block_state(q, k[..., start:end, :], v[..., start:end, :], mask)
        state = piece if state is None else merge_states(state, piece)
    return state[2]
