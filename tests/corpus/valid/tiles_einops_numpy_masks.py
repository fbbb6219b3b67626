# part: tiles
# why: blocks with einops, each causal block's mask built with numpy and cached by position, sympy imported on the first call: libraries, a small cache and a lazy import are not memory or work the check counts against it

from einops import rearrange as _rearrange
import numpy as _np

_masks = {}


def _mask(T_q, start, end):
    key = (T_q, start, end)
    if key not in _masks:
        _masks[key] = torch.from_numpy(_np.arange(start, end)[None, :] <= _np.arange(T_q)[:, None])
    return _masks[key]


def tiled_attention(q, k, v, block_size=128, *, causal=False):
    import sympy  # noqa: F401 - a large library, imported on first use

    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    T_q, T_k = q.shape[-2], k.shape[-2]
    blocks = _rearrange(k[..., : T_k - T_k % block_size, :], "... (n b) d -> n ... b d", b=block_size)
    values = _rearrange(v[..., : T_k - T_k % block_size, :], "... (n b) d -> n ... b d", b=block_size)
    pieces = [(i * block_size, blocks[i], values[i]) for i in range(blocks.shape[0])]
    if T_k % block_size:
        pieces.append((T_k - T_k % block_size, k[..., T_k - T_k % block_size:, :], v[..., T_k - T_k % block_size:, :]))
    state = None
    for start, keys, vals in pieces:
        if causal and start >= T_q:
            break
        mask = _mask(T_q, start, start + keys.shape[-2]).to(q.device) if causal else None
        block = block_state(q, keys, vals, mask)
        state = block if state is None else merge_states(state, block)
    return state[2]
