# part: tiles
# hint: tiles.key_count
# why: counts the key blocks with T = q.shape[-2], as if q and k always had the same length: keys after the first T_q are never seen, and with more queries than keys a block comes out empty

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    T = q.shape[-2]
    state = None
    for start in range(0, T, block_size):
        end = min(start + block_size, T)
        mask = None
        if causal:
            rows = torch.arange(T, device=q.device).unsqueeze(-1)
            mask = torch.arange(start, end, device=q.device) <= rows
        piece = block_state(q, k[..., start:end, :], v[..., start:end, :], mask)
        state = piece if state is None else merge_states(state, piece)
    return state[2]
