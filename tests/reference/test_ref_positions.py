"""Part `positions`: the interleaved sinusoidal encoding, similarity and permutation equivariance."""

import math

import pytest
import torch
import torch.nn.functional as F

from attention_ref import (
    add_positions,
    causal_mask,
    is_permutation_equivariant,
    position_similarity,
    scaled_dot_product_attention,
    sinusoidal_encoding,
)


def encoding_by_hand(T, d_model, base=10000.0):
    """The docs/contract.md formula, one entry at a time with the math module (float64)."""
    rows = []
    for p in range(T):
        row = []
        for i in range(d_model // 2):
            angle = p / base ** (2 * i / d_model)
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float64)


@pytest.mark.parametrize("T, d_model, base", [(64, 64, 10000.0), (7, 10, 10000.0), (5, 4, 100.0), (1, 2, 10000.0)])
def test_sinusoidal_encoding_matches_the_interleaved_formula(T, d_model, base):
    pe = sinusoidal_encoding(T, d_model, base)
    assert pe.shape == (T, d_model)
    assert pe.dtype == torch.float32
    torch.testing.assert_close(pe.double(), encoding_by_hand(T, d_model, base), atol=1e-6, rtol=0.0)


def test_sinusoidal_encoding_stays_exact_at_large_positions():
    # Angles near 3,000 radians: float32 angles would be off by ~1e-4.
    pe = sinusoidal_encoding(3000, 6)
    torch.testing.assert_close(pe.double(), encoding_by_hand(3000, 6), atol=1e-6, rtol=0.0)


def test_sinusoidal_encoding_starts_at_position_zero():
    pe = sinusoidal_encoding(3, 8)
    assert pe[0, 0::2].tolist() == [0.0] * 4
    assert pe[0, 1::2].tolist() == [1.0] * 4


def test_sinusoidal_encoding_uses_the_base():
    assert not torch.allclose(sinusoidal_encoding(10, 8, 100.0), sinusoidal_encoding(10, 8))


def test_position_similarity_matches_torch_cosine_similarity(gen, device, tol):
    pe = torch.randn(9, 6, generator=gen)
    expected = F.cosine_similarity(pe[:, None, :], pe[None, :, :], dim=-1)
    got = position_similarity(pe.to(device))
    assert got.shape == (9, 9)
    torch.testing.assert_close(got.cpu(), expected, **tol)


def test_position_similarity_of_the_encoding_is_symmetric_with_unit_diagonal():
    sim = position_similarity(sinusoidal_encoding(20, 16))
    torch.testing.assert_close(sim, sim.T, atol=1e-6, rtol=0.0)
    torch.testing.assert_close(sim.diagonal(), torch.ones(20), atol=1e-6, rtol=0.0)


def test_add_positions_adds_the_encoding_to_every_batch_item(gen, device, tol):
    x = torch.randn(3, 7, 10, generator=gen)
    got = add_positions(x.to(device))
    expected = x.double() + encoding_by_hand(7, 10)
    torch.testing.assert_close(got.cpu(), expected.float(), **tol)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float64])
def test_add_positions_keeps_the_dtype_of_x(dtype, device):
    x = torch.zeros(2, 4, 6, dtype=dtype, device=device)
    got = add_positions(x)
    assert got.dtype == dtype
    assert got.device.type == device
    torch.testing.assert_close(got[1].float().cpu(), sinusoidal_encoding(4, 6), atol=1e-2, rtol=0.0)


def self_attention(x):
    return scaled_dot_product_attention(x, x, x)[0]


def causal_self_attention(x):
    T = x.shape[1]
    return scaled_dot_product_attention(x, x, x, causal_mask(T, device=x.device))[0]


def test_attention_without_mask_or_positions_is_permutation_equivariant(gen, device):
    x = torch.randn(2, 8, 6, generator=gen).to(device)
    perm = torch.randperm(8, generator=gen).to(device)
    assert is_permutation_equivariant(self_attention, x, perm) is True


def test_adding_positions_breaks_permutation_equivariance(gen, device):
    x = torch.randn(2, 8, 6, generator=gen).to(device)
    perm = torch.tensor([1, 0, 2, 3, 4, 5, 6, 7], device=device)
    assert is_permutation_equivariant(lambda t: self_attention(add_positions(t)), x, perm) is False


def test_causal_attention_is_not_permutation_equivariant(gen, device):
    x = torch.randn(2, 8, 6, generator=gen).to(device)
    perm = torch.arange(7, -1, -1, device=device)
    assert is_permutation_equivariant(causal_self_attention, x, perm) is False


def test_every_function_is_equivariant_under_the_identity_permutation(gen):
    x = torch.randn(2, 5, 4, generator=gen)
    assert is_permutation_equivariant(lambda t: t.cumsum(dim=1), x, torch.arange(5)) is True


def test_permutation_equivariance_respects_atol(gen):
    x = torch.randn(1, 4, 3, generator=gen)
    perm = torch.tensor([3, 2, 1, 0])

    def nudged(t):
        # Equivariant up to a 1e-3 offset that depends on the position.
        return t + 1e-3 * torch.arange(t.shape[1], dtype=t.dtype)[None, :, None]

    assert is_permutation_equivariant(nudged, x, perm, atol=1e-2) is True
    assert is_permutation_equivariant(nudged, x, perm, atol=1e-4) is False
