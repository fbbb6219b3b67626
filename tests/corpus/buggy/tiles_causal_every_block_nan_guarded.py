# part: tiles
# hint: tiles.skip
# why: computes and masks every block, and its guard of empty rows (torch.where) drops the NaN of unseen keys: right values, no saving, only the clock shows it

def block_state(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.max(dim=-1).values
    p = torch.exp(scores - torch.nan_to_num(m, neginf=0.0).unsqueeze(-1))
    l = p.sum(dim=-1)
    o = (p @ v) / l.clamp(min=1.0).unsqueeze(-1)
    return m, l, torch.where((l > 0).unsqueeze(-1), o, torch.zeros_like(o))


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
