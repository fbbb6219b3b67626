"""Part `tiles`: softmax states, their merge and attention in blocks of keys, against PyTorch's attention."""

import math

import pytest
import torch
import torch.nn.functional as F

import attention_ref.tiles as tiles
from attention_ref import (
    attention_scores,
    block_state,
    causal_mask,
    merge_states,
    scaled_dot_product_attention,
    score_grid_bytes,
    tiled_attention,
    tiled_score_bytes,
)

FLOAT64_TOL = {"atol": 1e-12, "rtol": 1e-10}


def qkv(gen, lead, T_q, T_k, d, d_v, device, dtype=torch.float32):
    q = torch.randn(*lead, T_q, d, generator=gen, dtype=torch.float64)
    k = torch.randn(*lead, T_k, d, generator=gen, dtype=torch.float64)
    v = torch.randn(*lead, T_k, d_v, generator=gen, dtype=torch.float64)
    return (t.to(device=device, dtype=dtype) for t in (q, k, v))


def close(got, want, dtype, tol):
    """Within the device's tolerance in float32; far tighter in float64, where only rounding is left."""
    assert got.dtype == want.dtype == dtype
    torch.testing.assert_close(got, want, **(FLOAT64_TOL if dtype == torch.float64 else tol))


# Shapes: (batch dims, T_q, T_k, d, d_v, block_size); block sizes that divide T_k and that do not,
# a single short block (block_size > T_k), one key per block, T_q < T_k and T_q > T_k.
SHAPES = [
    ((2, 3), 5, 12, 8, 6, 4),
    ((2, 3), 5, 13, 8, 6, 4),
    ((2, 2), 17, 9, 4, 5, 2),
    ((3,), 7, 7, 16, 16, 3),
    ((2, 2), 6, 11, 8, 3, 1),
    ((2, 2), 6, 11, 8, 3, 64),
    ((), 9, 30, 5, 7, 8),
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("lead, T_q, T_k, d, d_v, block_size", SHAPES)
def test_tiled_attention_equals_pytorch_attention(lead, T_q, T_k, d, d_v, block_size, causal, dtype, gen, device, tol):
    q, k, v = qkv(gen, lead, T_q, T_k, d, d_v, device, dtype)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # top-left aligned, as the contract
    close(tiled_attention(q, k, v, block_size, causal=causal), want, dtype, tol)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("lead, T_q, T_k, d, d_v, block_size", SHAPES)
def test_tiled_attention_equals_the_materialised_reference(lead, T_q, T_k, d, d_v, block_size, causal, gen, device, tol):
    q, k, v = qkv(gen, lead, T_q, T_k, d, d_v, device, torch.float64)
    mask = causal_mask(T_q, T_k, device=device) if causal else None
    want, _ = scaled_dot_product_attention(q, k, v, mask)
    close(tiled_attention(q, k, v, block_size, causal=causal), want, torch.float64, tol)


def test_the_default_block_size_is_128(gen, monkeypatch):
    seen = []
    real = tiles.block_state
    monkeypatch.setattr(tiles, "block_state", lambda q, k, v, mask=None: seen.append(k.shape[-2]) or real(q, k, v, mask))
    q, k, v = qkv(gen, (1,), 4, 300, 8, 8, "cpu")
    tiled_attention(q, k, v)
    assert seen == [128, 128, 44]


def test_tiled_attention_broadcasts_batch_dimensions(gen, device, tol):
    q, _, _ = qkv(gen, (2, 3), 5, 9, 4, 4, device)
    _, k, v = qkv(gen, (2, 1), 5, 9, 4, 4, device)
    close(tiled_attention(q, k, v, 4), F.scaled_dot_product_attention(q, k, v), torch.float32, tol)


# ---------------------------------------------------------------- block_state


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_block_state_is_max_sum_and_normalised_output(gen, device, dtype):
    q, k, v = qkv(gen, (2, 3), 5, 7, 8, 6, device, dtype)
    mask = torch.rand(2, 1, 5, 7, generator=gen).to(device) < 0.6
    mask[..., 0] = True
    m, l, o = block_state(q, k, v, mask)
    scores = attention_scores(q.double(), k.double()).masked_fill(~mask, float("-inf"))
    want_m = scores.amax(dim=-1)
    # compared in the dtype under test: float32 sums on a GPU differ from float64's in the seventh digit
    torch.testing.assert_close(m, want_m.to(dtype))
    torch.testing.assert_close(l, torch.exp(scores - want_m[..., None]).sum(dim=-1).to(dtype))
    want_o, _ = scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
    torch.testing.assert_close(o, want_o.to(dtype))
    assert m.shape == l.shape == (2, 3, 5) and o.shape == (2, 3, 5, 6)
    assert m.dtype == l.dtype == o.dtype == dtype and o.device.type == device


def test_a_fully_masked_row_is_the_empty_state_never_nan(gen, device):
    q, k, v = qkv(gen, (2,), 4, 6, 8, 3, device)
    mask = torch.ones(4, 6, dtype=torch.bool, device=device)
    mask[1] = False
    m, l, o = block_state(q, k, v, mask)
    assert not any(bool(t.isnan().any()) for t in (m, l, o))
    assert bool((m[:, 1] == float("-inf")).all()) and bool((l[:, 1] == 0).all()) and bool((o[:, 1] == 0).all())
    assert bool(m[:, [0, 2, 3]].isfinite().all()) and bool((l[:, [0, 2, 3]] >= 1).all())


def test_a_fully_masked_block_changes_nothing_when_merged(gen, device):
    q, k, v = qkv(gen, (2,), 4, 6, 8, 3, device)
    seen = block_state(q, k[:, :3], v[:, :3])
    empty = block_state(q, k[:, 3:], v[:, 3:], torch.zeros(4, 3, dtype=torch.bool, device=device))
    for merged in (merge_states(seen, empty), merge_states(empty, seen)):
        for got, want in zip(merged, seen):
            torch.testing.assert_close(got, want)
    for got, want in zip(merge_states(empty, empty), empty):
        assert torch.equal(got, want)


# ---------------------------------------------------------------- merge_states


def states(gen, device, sizes=(3, 5, 4), dtype=torch.float64):
    """The query block and the states of consecutive key blocks of the given sizes, and of all their keys."""
    q, k, v = qkv(gen, (2, 2), 6, sum(sizes), 8, 5, device, dtype)
    bounds = [0, *torch.tensor(sizes).cumsum(0).tolist()]
    parts = [block_state(q, k[..., a:b, :], v[..., a:b, :]) for a, b in zip(bounds, bounds[1:])]
    return parts, block_state(q, k, v)


def assert_states_close(got, want):
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, **FLOAT64_TOL)


def test_merging_two_blocks_gives_the_state_of_all_their_keys(gen, device):
    (a, b), whole = states(gen, device, sizes=(4, 7))
    assert_states_close(merge_states(a, b), whole)


def test_merging_rescales_whichever_side_has_the_smaller_max(gen, device):
    q, k, v = qkv(gen, (2,), 5, 6, 8, 4, device, torch.float64)
    q[..., 0] = 2.0
    for big in (0, 1):  # the larger scores in the first block, then in the second
        lifted = k.clone()
        lifted[:, 3 * big:3 * big + 3, 0] += 10  # those scores rise by 20 / √8
        a, b = block_state(q, lifted[:, :3], v[:, :3]), block_state(q, lifted[:, 3:], v[:, 3:])
        assert bool(((a[0] > b[0]) if big == 0 else (b[0] > a[0])).all())
        assert_states_close(merge_states(a, b), block_state(q, lifted, v))


def test_merging_is_commutative_exactly_and_associative_up_to_rounding(gen, device):
    (a, b, c), whole = states(gen, device)
    for x, y in zip(merge_states(a, b), merge_states(b, a)):
        assert torch.equal(x, y)
    left, right = merge_states(merge_states(a, b), c), merge_states(a, merge_states(b, c))
    assert_states_close(left, right)
    assert_states_close(left, whole)


def test_merging_survives_scores_far_apart(gen, device):
    q, k, v = qkv(gen, (2,), 4, 6, 8, 4, device)
    k[:, :3] *= 200  # scores near ±1000: exp of their difference overflows float32 unless rescaled from the max
    got = tiled_attention(q, k, v, 3)
    assert bool(got.isfinite().all())
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q.double(), k.double(), v.double()).float())


# ---------------------------------------------------------------- what tiled_attention holds and skips


def visited_blocks(monkeypatch) -> list[tuple[int, int]]:
    """Record (queries, keys) of every block_state call tiled_attention makes."""
    seen = []
    real = tiles.block_state

    def counting(q, k, v, mask=None):
        seen.append((q.shape[-2], k.shape[-2]))
        return real(q, k, v, mask)

    monkeypatch.setattr(tiles, "block_state", counting)
    return seen


@pytest.mark.parametrize("T_q, T_k, block_size, computed", [
    (10, 40, 4, 3),   # blocks starting at keys 0, 4, 8: the other seven come after every query
    (9, 40, 4, 3),    # the block starting at key 8 holds the last query's own key
    (8, 40, 4, 2),    # the block starting at key 8 comes after query 7, the last
    (40, 10, 4, 3),   # more queries than keys: every block is seen
    (12, 12, 5, 3),
])
def test_causal_blocks_above_the_diagonal_are_skipped(T_q, T_k, block_size, computed, gen, monkeypatch):
    seen = visited_blocks(monkeypatch)
    q, k, v = qkv(gen, (2,), T_q, T_k, 4, 4, "cpu")
    got = tiled_attention(q, k, v, block_size, causal=True)
    assert len(seen) == computed
    torch.testing.assert_close(got, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    seen.clear()
    tiled_attention(q, k, v, block_size)
    assert len(seen) == math.ceil(T_k / block_size)


def test_no_block_holds_more_than_block_size_keys(gen, monkeypatch):
    seen = visited_blocks(monkeypatch)
    q, k, v = qkv(gen, (1,), 33, 50, 4, 4, "cpu")
    tiled_attention(q, k, v, 16)
    assert seen == [(33, 16), (33, 16), (33, 16), (33, 2)]


@pytest.mark.parametrize("block_size", [0, -1])
def test_block_size_below_one_raises(block_size, gen):
    q, k, v = qkv(gen, (1,), 3, 4, 2, 2, "cpu")
    with pytest.raises(ValueError, match="block_size"):
        tiled_attention(q, k, v, block_size)
    with pytest.raises(ValueError, match="block_size"):
        tiled_score_bytes(3, block_size)


# ---------------------------------------------------------------- tiled_score_bytes


def test_one_block_of_all_keys_is_the_whole_grid():
    for T in (1, 64, 1_000):
        assert tiled_score_bytes(T, T) == score_grid_bytes(T)
        assert tiled_score_bytes(T, T, n_heads=3, batch=2, dtype=torch.float16) == \
            score_grid_bytes(T, n_heads=3, batch=2, dtype=torch.float16)


def test_blocks_of_128_keys_at_131072_tokens_hold_64_mib_not_64_gib():
    assert tiled_score_bytes(131_072, 128) == 64 * 2**20
    assert score_grid_bytes(131_072) == 64 * 2**30
    assert score_grid_bytes(131_072) // tiled_score_bytes(131_072, 128) == 131_072 // 128


def test_tiled_score_bytes_scale_with_heads_batch_and_dtype():
    assert tiled_score_bytes(100, 8, n_heads=4, batch=3, dtype=torch.float64) == 3 * 4 * 100 * 8 * 8
    assert tiled_score_bytes(100, 8, dtype=torch.bfloat16) == 100 * 8 * 2


def test_the_worked_examples_of_section_6():
    from attention_ref import CAT_SAT_DOWN_KEYS, CAT_SAT_DOWN_QUERIES

    m, l, o = block_state(CAT_SAT_DOWN_QUERIES[2:3], CAT_SAT_DOWN_KEYS[:2], torch.eye(2))
    assert [round(m.item(), 3), round(l.item(), 3)] == [2.828, 1.059]
    assert [round(x, 3) for x in o[0].tolist()] == [0.056, 0.944]
    # one query; A: scores 1 and 3, values 10 and 20; B: score 2, value 30 (keys and query of width 1, d = 1)
    q, v = torch.ones(1, 1, dtype=torch.float64), torch.tensor([[10.0], [20.0], [30.0]], dtype=torch.float64)
    keys = torch.tensor([[1.0], [3.0], [2.0]], dtype=torch.float64)
    a, b = block_state(q, keys[:2], v[:2]), block_state(q, keys[2:], v[2:])
    assert [round(t.item(), 3) for t in a] == [3.0, 1.135, 18.808] and [t.item() for t in b] == [2.0, 1.0, 30.0]
    merged = merge_states(a, b)
    assert [round(t.item(), 3) for t in merged] == [3.0, 1.503, 21.547]
