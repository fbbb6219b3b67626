# part: tiles
# why: two nested loops, over blocks of queries and, inside, over blocks of keys; a causal key block is visited only up to the query block's last row, and the outputs are put together with torch.cat

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be at least 1, got {block_size}")
    T_q, T_k = q.shape[-2], k.shape[-2]
    outputs = []
    for q_start in range(0, T_q, block_size):
        q_end = min(q_start + block_size, T_q)
        q_blk = q[..., q_start:q_end, :]
        state = None
        last_key = min(T_k, q_end) if causal else T_k
        for k_start in range(0, last_key, block_size):
            k_end = min(k_start + block_size, T_k)
            mask = None
            if causal:
                rows = torch.arange(q_start, q_end, device=q.device)[:, None]
                mask = torch.arange(k_start, k_end, device=q.device)[None, :] <= rows
            piece = block_state(q_blk, k[..., k_start:k_end, :], v[..., k_start:k_end, :], mask)
            state = piece if state is None else merge_states(state, piece)
        outputs.append(state[2])
    return torch.cat(outputs, dim=-2)
