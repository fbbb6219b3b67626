"""Part `heads`: split/merge and CausalSelfAttention against torch.nn.MultiheadAttention and SDPA."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from attention_ref import CausalSelfAttention, causal_mask, merge_heads, split_heads

# (B, T, D, H): B and H >= 2, T != D, and one head.
SHAPES = [(2, 5, 12, 3), (3, 9, 8, 2), (2, 7, 16, 4), (2, 4, 6, 1)]


@pytest.mark.parametrize("B, T, D, H", SHAPES)
def test_split_heads_gives_head_h_features_h_dh_to_h_plus_1_dh(B, T, D, H, gen, device):
    x = torch.randn(B, T, D, generator=gen).to(device)
    heads = split_heads(x, H)
    dh = D // H
    assert heads.shape == (B, H, T, dh)
    for h in range(H):
        assert torch.equal(heads[:, h], x[:, :, h * dh : (h + 1) * dh])


@pytest.mark.parametrize("B, T, D, H", SHAPES)
def test_merge_heads_concatenates_heads_along_features(B, T, D, H, gen, device):
    x = torch.randn(B, H, T, D // H, generator=gen).to(device)
    merged = merge_heads(x)
    assert merged.shape == (B, T, D)
    assert torch.equal(merged, torch.cat([x[:, h] for h in range(H)], dim=-1))


@pytest.mark.parametrize("B, T, D, H", SHAPES)
def test_split_then_merge_is_lossless_both_ways(B, T, D, H, gen, device):
    x = torch.randn(B, T, D, generator=gen).to(device)
    assert torch.equal(merge_heads(split_heads(x, H)), x)
    y = torch.randn(B, H, T, D // H, generator=gen).to(device)
    assert torch.equal(split_heads(merge_heads(y), H), y)


def build_pair(D, H, seed):
    """A reference module and an nn.MultiheadAttention holding the same weights."""
    torch.manual_seed(seed)
    ref = CausalSelfAttention(D, H)
    mha = nn.MultiheadAttention(D, H, batch_first=True, bias=True, dropout=0.0)
    with torch.no_grad():
        # Non-zero biases, so a mix-up of the bias layout cannot hide.
        ref.qkv.bias.normal_()
        ref.proj.bias.normal_()
        mha.in_proj_weight.copy_(ref.qkv.weight)
        mha.in_proj_bias.copy_(ref.qkv.bias)
        mha.out_proj.weight.copy_(ref.proj.weight)
        mha.out_proj.bias.copy_(ref.proj.bias)
    return ref.eval(), mha.eval()


@pytest.mark.parametrize("B, T, D, H", SHAPES)
def test_causal_self_attention_matches_multihead_attention(B, T, D, H, gen, device, tol):
    ref, mha = build_pair(D, H, seed=T)
    x = torch.randn(B, T, D, generator=gen)
    with torch.no_grad():
        blocked = ~causal_mask(T)  # nn.MultiheadAttention: True = may NOT attend
        expected_out, expected_w = mha(x, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False)
        out, weights = ref.to(device)(x.to(device))
    assert out.shape == (B, T, D)
    assert weights.shape == (B, H, T, T)
    torch.testing.assert_close(out.cpu(), expected_out, **tol)
    torch.testing.assert_close(weights.cpu(), expected_w, **tol)


@pytest.mark.parametrize("B, T, D, H", SHAPES)
def test_causal_self_attention_matches_sdpa_with_the_same_weights(B, T, D, H, gen, device, tol):
    ref, _ = build_pair(D, H, seed=100 + T)
    x = torch.randn(B, T, D, generator=gen)
    with torch.no_grad():
        q, k, v = F.linear(x, ref.qkv.weight, ref.qkv.bias).chunk(3, dim=-1)
        q, k, v = (t.reshape(B, T, H, D // H).permute(0, 2, 1, 3) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        expected = F.linear(attended.permute(0, 2, 1, 3).reshape(B, T, D), ref.proj.weight, ref.proj.bias)
        out, _ = ref.to(device)(x.to(device))
    torch.testing.assert_close(out.cpu(), expected, **tol)


def test_causal_self_attention_weights_rows_sum_to_one_and_are_causal(gen, device):
    torch.manual_seed(0)
    ref = CausalSelfAttention(16, 4).to(device)
    with torch.no_grad():
        _, weights = ref(torch.randn(3, 9, 16, generator=gen).to(device))
    sums = weights.sum(dim=-1)
    torch.testing.assert_close(sums, torch.ones_like(sums), atol=1e-5, rtol=0.0)
    assert torch.all(torch.triu(weights, diagonal=1) == 0)
    assert torch.all(weights[:, :, causal_mask(9, device=device)] > 0)


@pytest.mark.parametrize("cut", [1, 4, 8])
def test_changing_future_tokens_leaves_past_outputs_unchanged(cut, gen, device, tol):
    torch.manual_seed(1)
    ref = CausalSelfAttention(12, 3).to(device)
    x = torch.randn(2, 9, 12, generator=gen)
    changed = x.clone()
    changed[:, cut:] = torch.randn(2, 9 - cut, 12, generator=gen) * 10
    with torch.no_grad():
        out, weights = ref(x.to(device))
        out2, weights2 = ref(changed.to(device))
    torch.testing.assert_close(out2[:, :cut], out[:, :cut], **tol)
    torch.testing.assert_close(weights2[:, :, :cut], weights[:, :, :cut], **tol)
    assert not torch.allclose(out2[:, cut:], out[:, cut:], atol=1e-3)


@pytest.mark.parametrize("D, H", [(64, 4), (32, 2), (48, 3), (8, 8), (10, 1)])
def test_parameters_are_only_qkv_and_proj(D, H):
    module = CausalSelfAttention(D, H)
    shapes = {name: tuple(p.shape) for name, p in module.named_parameters()}
    assert shapes == {
        "qkv.weight": (3 * D, D),
        "qkv.bias": (3 * D,),
        "proj.weight": (D, D),
        "proj.bias": (D,),
    }
    assert sum(p.numel() for p in module.parameters()) == 4 * D * D + 4 * D
    assert isinstance(module.qkv, nn.Linear) and isinstance(module.proj, nn.Linear)


def test_causal_self_attention_has_no_dropout_and_is_deterministic(gen):
    torch.manual_seed(2)
    module = CausalSelfAttention(16, 2).train()
    assert not any(isinstance(m, nn.Dropout) for m in module.modules())
    x = torch.randn(2, 6, 16, generator=gen)
    with torch.no_grad():
        first, _ = module(x)
        second, _ = module(x)
    assert torch.equal(first, second)


def test_causal_self_attention_backpropagates_to_every_parameter(gen):
    torch.manual_seed(3)
    module = CausalSelfAttention(8, 2)
    out, _ = module(torch.randn(2, 5, 8, generator=gen))
    out.square().sum().backward()
    for name, p in module.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name
