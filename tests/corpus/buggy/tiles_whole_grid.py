# part: tiles
# hint: tiles.whole_grid
# why: tiled_attention treats all the keys as one block, so the whole T x T grid is built at once: right values, but it runs out of memory at large T

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    mask = None
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    return block_state(q, k, v, mask)[2]
