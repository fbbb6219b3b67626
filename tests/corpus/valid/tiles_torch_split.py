# part: tiles
# why: keys and values cut with torch.split (the last piece shorter), a running offset, and the causal mask of each piece built with tril(-offset)


def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size <= 0:
        raise ValueError(f"block_size must be positive, got {block_size}")
    T_q = q.shape[-2]
    state, offset = None, 0
    for k_blk, v_blk in zip(torch.split(k, block_size, dim=-2), torch.split(v, block_size, dim=-2)):
        if causal and offset >= T_q:
            break  # the first key of this piece comes after the last query
        mask = None
        if causal:
            # query i sees key offset + j iff offset + j <= i: the diagonal of tril moved down by offset
            mask = torch.ones(T_q, k_blk.shape[-2], dtype=torch.bool, device=q.device).tril(-offset)
        blk = block_state(q, k_blk, v_blk, mask)
        state = blk if state is None else merge_states(state, blk)
        offset += k_blk.shape[-2]
    return state[2]
