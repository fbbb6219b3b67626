"""Part `masks`: masks checked entry by entry against their definitions and against PyTorch."""

import pytest
import torch
import torch.nn.functional as F

from attention_ref import apply_mask, causal_average, causal_mask, combine_masks, padding_mask


@pytest.mark.parametrize("T", [1, 2, 7])
def test_causal_average_rows_spread_evenly_over_the_past(T):
    avg = causal_average(T)
    assert avg.shape == (T, T)
    assert avg.dtype == torch.float32
    for i in range(T):
        for j in range(T):
            expected = 1.0 / (i + 1) if j <= i else 0.0
            assert avg[i, j].item() == pytest.approx(expected, abs=1e-7), (i, j)


def test_causal_average_is_exactly_zero_above_the_diagonal():
    avg = causal_average(6)
    assert torch.equal(torch.triu(avg, diagonal=1), torch.zeros(6, 6))


@pytest.mark.parametrize("T_q, T_k", [(4, 4), (3, 6), (6, 3), (1, 5), (5, 1)])
def test_causal_mask_is_top_left_aligned(T_q, T_k, device):
    mask = causal_mask(T_q, T_k, device=device)
    assert mask.dtype == torch.bool
    assert mask.shape == (T_q, T_k)
    assert mask.device.type == device
    for i in range(T_q):
        for j in range(T_k):
            assert bool(mask[i, j]) == (j <= i), (i, j)


def test_causal_mask_key_count_defaults_to_query_count():
    assert torch.equal(causal_mask(5), causal_mask(5, 5))
    assert causal_mask(5).shape == (5, 5)


def test_causal_mask_defaults_to_the_cpu():
    assert causal_mask(3).device.type == "cpu"


@pytest.mark.parametrize("T_q, T_k", [(3, 7), (7, 3), (5, 5)])
def test_causal_mask_gives_the_same_attention_as_sdpa_is_causal(T_q, T_k, gen):
    q = torch.randn(2, T_q, 4, generator=gen)
    k = torch.randn(2, T_k, 4, generator=gen)
    v = torch.randn(2, T_k, 3, generator=gen)
    with_mask = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_mask(T_q, T_k))
    with_flag = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    torch.testing.assert_close(with_mask, with_flag, atol=1e-6, rtol=0.0)


def test_padding_mask_is_true_before_each_length(device):
    lengths = torch.tensor([3, 1, 5], device=device)
    mask = padding_mask(lengths, 5)
    assert mask.dtype == torch.bool
    assert mask.shape == (3, 5)
    assert mask.device.type == device
    for b, n in enumerate([3, 1, 5]):
        for t in range(5):
            assert bool(mask[b, t]) == (t < n), (b, t)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_padding_mask_accepts_integer_lengths(dtype):
    mask = padding_mask(torch.tensor([2, 4], dtype=dtype), 4)
    assert mask.tolist() == [[True, True, False, False], [True, True, True, True]]


def test_apply_mask_keeps_allowed_scores_unchanged(gen, device):
    scores = torch.randn(2, 3, 4, 6, generator=gen).to(device)
    mask = (torch.rand(4, 6, generator=gen) > 0.4).to(device)
    mask[:, 0] = True
    out = apply_mask(scores, mask)
    assert out.shape == scores.shape
    allowed = mask.expand_as(scores)
    assert torch.equal(out[allowed], scores[allowed])


def test_apply_mask_gives_disallowed_scores_zero_softmax_weight(gen, device):
    scores = torch.randn(2, 5, 7, generator=gen).to(device)
    mask = (torch.rand(2, 5, 7, generator=gen) > 0.5).to(device)
    mask[..., 3] = True
    weights = torch.softmax(apply_mask(scores, mask), dim=-1)
    assert torch.all(weights[~mask] == 0)
    assert torch.all(weights[mask] > 0)


def test_apply_mask_then_softmax_matches_sdpa_weights(gen, device, tol):
    # Weights from SDPA itself: attending over identity values returns the weight grid.
    q = torch.randn(2, 3, 5, 4, generator=gen)
    k = torch.randn(2, 3, 6, 4, generator=gen)
    mask = torch.rand(2, 1, 5, 6, generator=gen) > 0.5
    mask[..., 0] = True
    expected = F.scaled_dot_product_attention(q, k, torch.eye(6).expand(2, 3, 6, 6), attn_mask=mask)
    scores = (q @ k.transpose(-2, -1) / 2.0).to(device)  # d = 4, so sqrt(d) = 2
    got = torch.softmax(apply_mask(scores, mask.to(device)), dim=-1)
    torch.testing.assert_close(got.cpu(), expected, **tol)


def test_combine_masks_allows_only_what_both_allow(device):
    T = 5
    causal = causal_mask(T, device=device)
    padding = padding_mask(torch.tensor([5, 2, 3], device=device), T)
    combined = combine_masks(causal, padding)
    assert combined.dtype == torch.bool
    assert combined.shape == (3, 1, T, T)
    assert combined.device.type == device
    for b in range(3):
        for i in range(T):
            for j in range(T):
                expected = bool(causal[i, j]) and bool(padding[b, j])
                assert bool(combined[b, 0, i, j]) == expected, (b, i, j)


def test_combine_masks_applies_padding_to_keys_not_queries():
    causal = torch.ones(4, 4, dtype=torch.bool)
    padding = torch.tensor([[True, True, False, False]])
    combined = combine_masks(causal, padding)[0, 0]
    # Every query, padded or not, sees exactly the two real keys.
    assert combined.tolist() == [[True, True, False, False]] * 4
