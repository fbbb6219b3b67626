"""Part `scaling`: scores, weights and attention against torch.nn.functional.scaled_dot_product_attention.

SDPA returns only the output; its weight grid is recovered by attending over
identity values (output = weights @ I = weights).
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_ref import (
    attention_scores,
    attention_weights,
    causal_mask,
    combine_masks,
    dot_product_spread,
    materialized_attention,
    padding_mask,
    scaled_dot_product_attention,
    softmax_entropy,
)

DTYPES = [torch.float32, torch.float64]

# (batch shape, T_q, T_k, d, d_v): 3-D and 4-D, B and H >= 2, T_q != T_k, T != d.
SHAPES = [
    ((3,), 5, 7, 4, 6),
    ((2,), 9, 9, 16, 3),
    ((2, 3), 6, 10, 8, 5),
    ((3, 2), 11, 4, 5, 7),
]


def sdpa_weights(q, k, mask=None, is_causal=False):
    T_k = k.shape[-2]
    identity = torch.eye(T_k, dtype=q.dtype).expand(*k.shape[:-2], T_k, T_k)
    return F.scaled_dot_product_attention(q, k, identity, attn_mask=mask, is_causal=is_causal)


def draw(gen, batch, T_q, T_k, d, d_v, dtype):
    q = torch.randn(*batch, T_q, d, generator=gen, dtype=dtype)
    k = torch.randn(*batch, T_k, d, generator=gen, dtype=dtype)
    v = torch.randn(*batch, T_k, d_v, generator=gen, dtype=dtype)
    return q, k, v


def random_mask(gen, shape):
    mask = torch.rand(*shape, generator=gen) > 0.5
    mask[..., 0] = True  # fully masked rows are outside the graded domain
    return mask


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch, T_q, T_k, d, d_v", SHAPES)
def test_attention_scores_are_q_kt_over_sqrt_d(batch, T_q, T_k, d, d_v, dtype, gen, device, tol):
    q, k, _ = draw(gen, batch, T_q, T_k, d, d_v, dtype)
    expected = torch.einsum("...id,...jd->...ij", q.double(), k.double()) / math.sqrt(d)
    got = attention_scores(q.to(device), k.to(device))
    assert got.shape == (*batch, T_q, T_k)
    torch.testing.assert_close(got.cpu(), expected.to(dtype), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch, T_q, T_k, d, d_v", SHAPES)
def test_attention_matches_sdpa_without_mask(batch, T_q, T_k, d, d_v, dtype, gen, device, tol):
    q, k, v = draw(gen, batch, T_q, T_k, d, d_v, dtype)
    out, weights = scaled_dot_product_attention(q.to(device), k.to(device), v.to(device))
    assert out.shape == (*batch, T_q, d_v)
    assert weights.shape == (*batch, T_q, T_k)
    torch.testing.assert_close(out.cpu(), F.scaled_dot_product_attention(q, k, v), **tol)
    torch.testing.assert_close(weights.cpu(), sdpa_weights(q, k), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch, T_q, T_k, d, d_v", SHAPES)
def test_attention_matches_sdpa_with_boolean_mask(batch, T_q, T_k, d, d_v, dtype, gen, device, tol):
    q, k, v = draw(gen, batch, T_q, T_k, d, d_v, dtype)
    mask = random_mask(gen, (*batch, T_q, T_k))
    out, weights = scaled_dot_product_attention(q.to(device), k.to(device), v.to(device), mask.to(device))
    torch.testing.assert_close(out.cpu(), F.scaled_dot_product_attention(q, k, v, attn_mask=mask), **tol)
    torch.testing.assert_close(weights.cpu(), sdpa_weights(q, k, mask), **tol)


@pytest.mark.parametrize("mask_shape", [(5, 8), (1, 5, 8), (2, 1, 5, 8)])
def test_attention_broadcasts_the_mask_like_sdpa(mask_shape, gen, device, tol):
    q, k, v = draw(gen, (2, 3), 5, 8, 4, 6, torch.float32)
    mask = random_mask(gen, mask_shape)
    out, _ = scaled_dot_product_attention(q.to(device), k.to(device), v.to(device), mask.to(device))
    torch.testing.assert_close(out.cpu(), F.scaled_dot_product_attention(q, k, v, attn_mask=mask), **tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("batch, T_q, T_k, d, d_v", SHAPES)
def test_causal_attention_matches_sdpa_is_causal(batch, T_q, T_k, d, d_v, dtype, gen, device, tol):
    q, k, v = draw(gen, batch, T_q, T_k, d, d_v, dtype)
    mask = causal_mask(T_q, T_k, device=device)
    out, weights = scaled_dot_product_attention(q.to(device), k.to(device), v.to(device), mask)
    torch.testing.assert_close(out.cpu(), F.scaled_dot_product_attention(q, k, v, is_causal=True), **tol)
    torch.testing.assert_close(weights.cpu(), sdpa_weights(q, k, is_causal=True), **tol)


def test_causal_and_padding_attention_matches_sdpa(gen, device, tol):
    B, H, T, d = 3, 2, 6, 4
    q, k, v = draw(gen, (B, H), T, T, d, 5, torch.float32)
    mask = combine_masks(causal_mask(T), padding_mask(torch.tensor([6, 2, 4]), T))
    out, _ = scaled_dot_product_attention(q.to(device), k.to(device), v.to(device), mask.to(device))
    torch.testing.assert_close(out.cpu(), F.scaled_dot_product_attention(q, k, v, attn_mask=mask), **tol)


def test_materialized_attention_is_the_sdpa_output(gen, device, tol):
    q, k, v = draw(gen, (1,), 12, 12, 8, 8, torch.float32)
    got = materialized_attention(q.to(device), k.to(device), v.to(device))
    torch.testing.assert_close(got.cpu(), F.scaled_dot_product_attention(q, k, v), **tol)


def test_attention_weights_match_sdpa_on_given_scores(gen, device, tol):
    scores = torch.randn(2, 3, 5, 9, generator=gen)
    mask = random_mask(gen, (2, 3, 5, 9))
    # With q = scores, k = I * sqrt(T_k): q kᵀ / sqrt(T_k) = scores.
    k = torch.eye(9).expand(2, 3, 9, 9) * 3.0
    got = attention_weights(scores.to(device), mask.to(device))
    torch.testing.assert_close(got.cpu(), sdpa_weights(scores, k, mask), **tol)


def test_weights_rows_sum_to_one(gen, device):
    scores = (torch.randn(4, 3, 7, 11, generator=gen) * 5).to(device)
    mask = random_mask(gen, (4, 3, 7, 11)).to(device)
    for weights in (attention_weights(scores), attention_weights(scores, mask)):
        sums = weights.sum(dim=-1)
        torch.testing.assert_close(sums, torch.ones_like(sums), atol=1e-5, rtol=0.0)


def test_weights_are_exactly_zero_where_masked(gen, device):
    scores = torch.randn(2, 6, 6, generator=gen).to(device)
    mask = random_mask(gen, (2, 6, 6)).to(device)
    weights = attention_weights(scores, mask)
    assert torch.all(weights[~mask] == 0)
    assert torch.all(weights[mask] > 0)


def test_causal_weights_are_exactly_zero_above_the_diagonal(gen, device):
    q, k, v = (t.to(device) for t in draw(gen, (2, 2), 5, 8, 4, 4, torch.float32))
    _, weights = scaled_dot_product_attention(q, k, v, causal_mask(5, 8, device=device))
    assert torch.all(torch.triu(weights, diagonal=1) == 0)
    allowed = causal_mask(5, 8, device=device)
    assert torch.all(weights[:, :, allowed] > 0)


def test_changing_padded_keys_and_values_leaves_outputs_unchanged(gen, device, tol):
    B, H, T, d = 3, 2, 7, 4
    q, k, v = draw(gen, (B, H), T, T, d, 5, torch.float32)
    lengths = torch.tensor([7, 3, 5])
    mask = combine_masks(causal_mask(T), padding_mask(lengths, T)).to(device)
    k2, v2 = k.clone(), v.clone()
    for b, n in enumerate(lengths.tolist()):
        k2[b, :, n:] = torch.randn(H, T - n, d, generator=gen) * 100
        v2[b, :, n:] = torch.randn(H, T - n, 5, generator=gen) * 100
    out, _ = scaled_dot_product_attention(q.to(device), k.to(device), v.to(device), mask)
    out2, _ = scaled_dot_product_attention(q.to(device), k2.to(device), v2.to(device), mask)
    for b, n in enumerate(lengths.tolist()):
        torch.testing.assert_close(out2[b, :, :n], out[b, :, :n], **tol)
    # The change did reach the inputs the mask hides: without the mask, outputs move.
    free, _ = scaled_dot_product_attention(q, k, v)
    free2, _ = scaled_dot_product_attention(q, k2, v2)
    assert not torch.allclose(free[1], free2[1], atol=1e-3)


def test_changing_future_keys_leaves_earlier_causal_outputs_unchanged(gen, device, tol):
    q, k, v = draw(gen, (2, 2), 8, 8, 4, 4, torch.float32)
    k2, v2 = k.clone(), v.clone()
    k2[..., 5:, :] += 10.0
    v2[..., 5:, :] -= 10.0
    mask = causal_mask(8, device=device)
    out, _ = scaled_dot_product_attention(q.to(device), k.to(device), v.to(device), mask)
    out2, _ = scaled_dot_product_attention(q.to(device), k2.to(device), v2.to(device), mask)
    torch.testing.assert_close(out2[..., :5, :], out[..., :5, :], **tol)
    assert not torch.allclose(out2[..., 5:, :], out[..., 5:, :], atol=1e-3)


# softmax_entropy


def test_entropy_matches_torch_categorical(gen, device, tol):
    weights = torch.softmax(torch.randn(3, 4, 10, generator=gen) * 2, dim=-1)
    expected = torch.distributions.Categorical(probs=weights).entropy()
    got = softmax_entropy(weights.to(device))
    assert got.shape == (3, 4)
    torch.testing.assert_close(got.cpu(), expected, **tol)


def test_entropy_counts_zero_weights_as_zero_without_nan(device):
    weights = torch.tensor([[0.5, 0.0, 0.5, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]], device=device)
    got = softmax_entropy(weights)
    assert not torch.isnan(got).any()
    torch.testing.assert_close(got.cpu(), torch.tensor([math.log(2), 0.0, 0.0]), atol=1e-6, rtol=0.0)


def test_entropy_of_masked_weights_has_no_nan(gen, device):
    scores = torch.randn(4, 6, generator=gen).to(device)
    weights = attention_weights(scores, causal_mask(4, 6, device=device))
    got = softmax_entropy(weights)
    assert torch.isfinite(got).all()
    assert got[0].item() == pytest.approx(0.0, abs=1e-7)  # the first query sees one key


@pytest.mark.parametrize("T", [2, 8, 13])
def test_entropy_of_uniform_weights_is_log_t(T):
    assert softmax_entropy(torch.full((T,), 1.0 / T)).item() == pytest.approx(math.log(T), abs=1e-6)


# dot_product_spread


def test_spread_is_the_std_of_dot_products_drawn_from_the_generator():
    d, n = 6, 500
    g = torch.Generator().manual_seed(3)
    a = torch.randn(n, d, generator=g).double().numpy()
    b = torch.randn(n, d, generator=g).double().numpy()
    expected = np.std((a * b).sum(axis=1), ddof=1)
    got = dot_product_spread(d, n, scaled=False, generator=torch.Generator().manual_seed(3))
    assert isinstance(got, float)
    assert got == pytest.approx(expected, rel=1e-5)


def test_scaled_spread_is_raw_spread_over_sqrt_d():
    raw = dot_product_spread(16, 2000, scaled=False, generator=torch.Generator().manual_seed(5))
    scaled = dot_product_spread(16, 2000, scaled=True, generator=torch.Generator().manual_seed(5))
    assert scaled == pytest.approx(raw / 4.0, rel=1e-5)


def test_spread_is_reproducible_with_a_seeded_generator():
    first = dot_product_spread(8, 300, scaled=False, generator=torch.Generator().manual_seed(11))
    again = dot_product_spread(8, 300, scaled=False, generator=torch.Generator().manual_seed(11))
    other = dot_product_spread(8, 300, scaled=False, generator=torch.Generator().manual_seed(12))
    assert first == again
    assert first != other
