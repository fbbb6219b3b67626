"""Every figure of docs/figures.md, reproduced with the reference.

Figures quoted to n decimals are checked to n decimals; statistical figures
are checked against a band derived from the sampling distribution.
"""

import math

import pytest
import torch
from torch.nn import functional as F

from attention_ref import (
    CAT_SAT_DOWN_KEYS,
    CAT_SAT_DOWN_QUERIES,
    CAT_SAT_DOWN_TOKENS,
    CausalSelfAttention,
    attention_scores,
    attention_weights,
    causal_average,
    causal_mask,
    dot_product_spread,
    merge_heads,
    position_similarity,
    scaled_dot_product_attention,
    score_grid_bytes,
    sinusoidal_encoding,
    softmax_entropy,
    split_heads,
)


def assert_to_decimals(got, quoted, decimals):
    """`got` rounds to `quoted` at the precision the figure was quoted with."""
    got = torch.as_tensor(got, dtype=torch.float64).flatten().tolist()
    quoted = torch.as_tensor(quoted, dtype=torch.float64).flatten().tolist()
    assert len(got) == len(quoted)
    for g, q in zip(got, quoted):
        assert round(g, decimals) == pytest.approx(q, abs=1e-12), f"{g} does not round to {q}"


# "the cat sat down"

RAW_SCORES = [[1, 0, 0.5, 0.5], [1, 0, 0.5, 0.5], [0, 4, 1, 0], [0.5, 4, 1.25, 0.25]]
WEIGHTS = [
    [0.345, 0.170, 0.242, 0.242],
    [0.345, 0.170, 0.242, 0.242],
    [0.048, 0.808, 0.097, 0.048],
    [0.065, 0.771, 0.110, 0.054],
]
CAUSAL_WEIGHTS = [[1, 0, 0, 0], [0.670, 0.330, 0, 0], [0.050, 0.848, 0.102, 0], [0.065, 0.771, 0.110, 0.054]]


def test_cat_sat_down_data_is_the_lesson_example():
    assert CAT_SAT_DOWN_TOKENS == ("the", "cat", "sat", "down")
    assert CAT_SAT_DOWN_QUERIES.tolist() == [[0, 1], [0, 1], [2, 0], [2, 0.5]]
    assert CAT_SAT_DOWN_KEYS.tolist() == [[0, 1], [2, 0], [0.5, 0.5], [0, 0.5]]


def test_cat_sat_down_raw_scores():
    assert (CAT_SAT_DOWN_QUERIES @ CAT_SAT_DOWN_KEYS.T).tolist() == RAW_SCORES
    scaled = attention_scores(CAT_SAT_DOWN_QUERIES, CAT_SAT_DOWN_KEYS)
    torch.testing.assert_close(scaled, torch.tensor(RAW_SCORES) / math.sqrt(2), atol=1e-6, rtol=0.0)


def test_cat_sat_down_weights_scaled_without_mask():
    weights = attention_weights(attention_scores(CAT_SAT_DOWN_QUERIES, CAT_SAT_DOWN_KEYS))
    assert_to_decimals(weights, WEIGHTS, 3)


def test_cat_sat_down_causal_weights():
    scores = attention_scores(CAT_SAT_DOWN_QUERIES, CAT_SAT_DOWN_KEYS)
    causal = attention_weights(scores, causal_mask(4))
    assert_to_decimals(causal, CAUSAL_WEIGHTS, 3)
    # "down unchanged": the last query already sees every key.
    assert torch.equal(causal[3], attention_weights(scores)[3])


# Averaging


def test_causal_average_for_t_5():
    expected = torch.tensor(
        [
            [1, 0, 0, 0, 0],
            [0.5, 0.5, 0, 0, 0],
            [1 / 3, 1 / 3, 1 / 3, 0, 0],
            [0.25, 0.25, 0.25, 0.25, 0],
            [0.2, 0.2, 0.2, 0.2, 0.2],
        ]
    )
    torch.testing.assert_close(causal_average(5), expected, atol=1e-7, rtol=0.0)
    assert torch.all(torch.triu(causal_average(5), diagonal=1) == 0)


# Scaling: the spread of dot products


def std_of_sample_std(d, n):
    """Standard deviation of the sample std of n dot products of standard-normal d-vectors.

    A dot product X = sum of d products a_i b_i has variance d and fourth moment
    E[X^4] = d E[a^4] E[b^4] + 3 d (d - 1) = 3 d^2 + 6 d, so kurtosis 3 + 6/d.
    For large n, Var(sample std) ~= sigma^2 (kurtosis - 1) / (4 n).
    """
    kurtosis = 3 + 6 / d
    return math.sqrt(d * (kurtosis - 1) / (4 * n))


def test_the_band_for_the_spread_matches_simulation():
    # The derivation above, checked on a small case where many repeats are cheap.
    d, n, repeats = 4, 400, 300
    g = torch.Generator().manual_seed(17)
    samples = torch.tensor([dot_product_spread(d, n, scaled=False, generator=g) for _ in range(repeats)])
    assert samples.std().item() == pytest.approx(std_of_sample_std(d, n), rel=0.2)
    assert samples.mean().item() == pytest.approx(math.sqrt(d), abs=4 * std_of_sample_std(d, n) / math.sqrt(repeats))


@pytest.mark.parametrize("d, quoted", [(4, 2.0), (64, 8.0), (512, 22.6)])
def test_raw_spread_is_about_sqrt_d(d, quoted):
    n = 10_000
    assert math.sqrt(d) == pytest.approx(quoted, abs=0.05)
    got = dot_product_spread(d, scaled=False, generator=torch.Generator().manual_seed(d))
    assert abs(got - math.sqrt(d)) <= 5 * std_of_sample_std(d, n)


@pytest.mark.parametrize("d", [4, 64, 512])
def test_scaled_spread_is_about_one(d):
    n = 10_000
    got = dot_product_spread(d, scaled=True, generator=torch.Generator().manual_seed(1000 + d))
    assert abs(got - 1.0) <= 5 * std_of_sample_std(d, n) / math.sqrt(d)


# Scaling: 8 scores at d = 512


def eight_scores(draws, d=512, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(draws, 1, d, generator=g)
    k = torch.randn(draws, 8, d, generator=g)
    return (q @ k.transpose(-2, -1)).squeeze(1)


def test_unscaled_softmax_puts_all_weight_on_one_key():
    # FACTS quotes one draw: weight 1.000 on one key, entropy 0.000. About half
    # of all draws show exactly those figures to 3 decimals (binomial sd ~0.011
    # at 2000 draws, so 0.4 is a wide margin), and the entropy is small in most.
    weights = attention_weights(eight_scores(2000))
    entropy = softmax_entropy(weights)
    as_quoted = (weights.max(dim=-1).values.round(decimals=3) == 1.0) & (entropy.round(decimals=3) == 0.0)
    assert as_quoted.float().mean().item() > 0.4
    assert entropy.median().item() < 0.01


def test_scaled_entropy_of_1_48_is_a_typical_draw():
    # FACTS quotes one draw (1.48); the figure must sit well inside the spread of
    # draws, not in a tail, and far above the unscaled entropy.
    scores = eight_scores(2000)
    scaled = softmax_entropy(attention_weights(scores / math.sqrt(512)))
    unscaled = softmax_entropy(attention_weights(scores))
    low, high = torch.quantile(scaled, torch.tensor([0.05, 0.95])).tolist()
    assert low < 1.48 < high
    assert scaled.max().item() <= math.log(8) + 1e-6
    assert unscaled.median().item() < 0.01 * scaled.median().item()


@pytest.mark.parametrize("seed", range(5))
def test_scaling_raises_entropy_for_every_seed(seed):
    scores = eight_scores(200, seed=seed)
    scaled = softmax_entropy(attention_weights(scores / math.sqrt(512))).mean()
    unscaled = softmax_entropy(attention_weights(scores)).mean()
    assert scaled > 1.0 > 5 * unscaled


def test_maximum_entropy_for_8_keys_is_ln_8():
    uniform = softmax_entropy(torch.full((8,), 1 / 8)).item()
    assert uniform == pytest.approx(math.log(8), abs=1e-6)
    assert_to_decimals(uniform, 2.079, 3)


def test_mean_largest_weight_rises_with_d_only_without_scaling():
    unscaled, scaled = [], []
    for d in (16, 64, 256):
        scores = eight_scores(1000, d=d, seed=d)
        unscaled.append(attention_weights(scores).max(dim=-1).values.mean().item())
        scaled.append(attention_weights(scores / math.sqrt(d)).max(dim=-1).values.mean().item())
    assert unscaled[0] < unscaled[1] < unscaled[2]
    assert max(scaled) - min(scaled) < 0.05
    assert all(u > s for u, s in zip(unscaled, scaled))


# Multi-head


def test_split_of_1_10_64_into_4_heads(gen):
    x = torch.randn(1, 10, 64, generator=gen)
    heads = split_heads(x, 4)
    assert heads.shape == (1, 4, 10, 16)
    _, weights = scaled_dot_product_attention(heads, heads, heads)
    assert weights.shape == (1, 4, 10, 10)
    assert torch.equal(merge_heads(heads), x)


def test_causal_self_attention_64_4_has_16640_parameters():
    module = CausalSelfAttention(64, 4)
    count = sum(p.numel() for p in module.parameters())
    assert count == 16_640
    assert count == 64 * 192 + 192 + 64 * 64 + 64


def test_causal_self_attention_64_4_shapes_and_sdpa_agreement(gen):
    torch.manual_seed(0)
    module = CausalSelfAttention(64, 4)
    x = torch.randn(2, 12, 64, generator=gen)
    with torch.no_grad():
        out, weights = module(x)
        q, k, v = module.qkv(x).split(64, dim=-1)
        q, k, v = (t.view(2, 12, 4, 16).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        expected = module.proj(attended.transpose(1, 2).reshape(2, 12, 64))
    assert out.shape == (2, 12, 64)
    assert weights.shape == (2, 4, 12, 12)
    assert (out - expected).abs().max().item() < 1e-6


# Positions


@pytest.mark.parametrize(
    "other, quoted, decimals", [(10, 1.0, 1), (11, 0.966, 3), (15, 0.734, 3), (30, 0.59, 2), (60, 0.49, 2)]
)
def test_cosine_similarity_of_position_10(other, quoted, decimals):
    sim = position_similarity(sinusoidal_encoding(64, 64))
    assert_to_decimals(sim[10, other].item(), quoted, decimals)


# Cost


@pytest.mark.parametrize(
    "T, expected",
    [(64, 16_384), (1_024, 4 * 2**20), (8_192, 256 * 2**20), (131_072, 64 * 2**30)],
)
def test_score_grid_bytes_per_head_float32(T, expected):
    assert score_grid_bytes(T) == expected
    assert score_grid_bytes(T, dtype=torch.float32) == expected


def test_1024_tokens_hold_256_times_the_entries_of_64():
    assert score_grid_bytes(1_024) // score_grid_bytes(64) == 256
    assert score_grid_bytes(1_024) % score_grid_bytes(64) == 0


@pytest.mark.parametrize("T", [64, 1_000, 2_000])
def test_doubling_t_quadruples_the_grid(T):
    assert score_grid_bytes(2 * T) == 4 * score_grid_bytes(T)


def test_score_grid_bytes_scale_with_heads_batch_and_dtype():
    one = score_grid_bytes(100)
    assert score_grid_bytes(100, n_heads=4, batch=3) == 12 * one
    assert score_grid_bytes(100, dtype=torch.float16) * 2 == one
    assert score_grid_bytes(100, dtype=torch.float64) == 2 * one
    assert isinstance(one, int)
