# part: tiles
# hint: tiles.whole_grid
# why: tiled_attention hands all the keys to the section-2 scaled_dot_product_attention, which builds the whole T x T grid (when tiles is graded, the grader serves that name: the grid is built there, and counted)

def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    mask = None
    if causal:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril()
    return scaled_dot_product_attention(q, k, v, mask)[0]
