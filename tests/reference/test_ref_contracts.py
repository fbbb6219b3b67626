"""docs/contract.md conventions for every name: inputs untouched, device and dtype kept, ValueError on bad arguments."""

import pytest
import torch

from attention_ref import (
    CausalSelfAttention,
    add_positions,
    apply_mask,
    attention_scores,
    attention_weights,
    block_state,
    causal_average,
    causal_mask,
    combine_masks,
    dot_product_spread,
    fit_power_law,
    is_permutation_equivariant,
    materialized_attention,
    merge_heads,
    merge_states,
    padding_mask,
    position_similarity,
    scaled_dot_product_attention,
    score_grid_bytes,
    sinusoidal_encoding,
    softmax_entropy,
    split_heads,
    tiled_attention,
    tiled_score_bytes,
    time_call,
)


def tensors(gen, device, dtype=torch.float32):
    """Inputs for every tensor function: (name, function, args)."""

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=dtype).to(device)

    mask = torch.rand(2, 5, 7, generator=gen) > 0.5
    mask[..., 0] = True
    mask = mask.to(device)
    torch.manual_seed(0)
    module = CausalSelfAttention(8, 2).to(device=device, dtype=dtype)
    return [
        ("apply_mask", apply_mask, (randn(2, 5, 7), mask)),
        ("attention_scores", attention_scores, (randn(2, 3, 5, 4), randn(2, 3, 7, 4))),
        ("attention_weights", attention_weights, (randn(2, 5, 7), mask)),
        (
            "scaled_dot_product_attention",
            scaled_dot_product_attention,
            (randn(2, 5, 4), randn(2, 7, 4), randn(2, 7, 3), mask),
        ),
        ("materialized_attention", materialized_attention, (randn(1, 6, 4), randn(1, 6, 4), randn(1, 6, 4))),
        ("softmax_entropy", softmax_entropy, (torch.softmax(randn(3, 6), dim=-1),)),
        ("split_heads", split_heads, (randn(2, 5, 12), 3)),
        ("merge_heads", merge_heads, (randn(2, 3, 5, 4),)),
        ("CausalSelfAttention", module, (randn(2, 6, 8),)),
        ("position_similarity", position_similarity, (randn(6, 4),)),
        ("add_positions", add_positions, (randn(2, 5, 6),)),
        ("block_state", block_state, (randn(2, 5, 4), randn(2, 7, 4), randn(2, 7, 3), mask)),
        ("merge_states", merge_states, (block_state(randn(2, 5, 4), randn(2, 3, 4), randn(2, 3, 3)),
                                        block_state(randn(2, 5, 4), randn(2, 4, 4), randn(2, 4, 3)))),
        ("tiled_attention", lambda q, k, v: tiled_attention(q, k, v, 3, causal=True),
         (randn(2, 5, 4), randn(2, 7, 4), randn(2, 7, 3))),
    ]


def outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def tensors_in(args):
    """The tensors among a call's arguments, also inside a state tuple (m, l, o)."""
    return [t for a in args for t in (a if isinstance(a, tuple) else (a,)) if isinstance(t, torch.Tensor)]


NAMES = [name for name, _, _ in tensors(torch.Generator().manual_seed(0), "cpu")]


@pytest.mark.parametrize("name", NAMES)
def test_inputs_are_not_modified(name, gen, device):
    _, fn, args = next(entry for entry in tensors(gen, device) if entry[0] == name)
    before = [a.clone() for a in tensors_in(args)]
    with torch.no_grad():
        fn(*args)
    for a, b in zip(tensors_in(args), before):
        assert torch.equal(a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", NAMES)
def test_outputs_keep_the_device_and_dtype(name, dtype, gen, device):
    _, fn, args = next(entry for entry in tensors(gen, device, dtype) if entry[0] == name)
    with torch.no_grad():
        results = outputs(fn(*args))
    for result in results:
        assert result.device.type == device
        assert result.dtype == dtype


def test_mask_functions_return_booleans_on_the_device(device):
    lengths = torch.tensor([2, 4], device=device)
    padding = padding_mask(lengths, 4)
    causal = causal_mask(4, device=device)
    for mask in (padding, causal, combine_masks(causal, padding)):
        assert mask.dtype == torch.bool
        assert mask.device.type == device


def test_combine_and_permutation_leave_inputs_alone(gen, device):
    causal = causal_mask(4, device=device)
    padding = padding_mask(torch.tensor([2, 4], device=device), 4)
    saved = (causal.clone(), padding.clone())
    combine_masks(causal, padding)
    assert torch.equal(causal, saved[0]) and torch.equal(padding, saved[1])
    x = torch.randn(2, 4, 3, generator=gen).to(device)
    perm = torch.tensor([2, 0, 3, 1], device=device)
    kept = (x.clone(), perm.clone())
    is_permutation_equivariant(lambda t: t * 2, x, perm)
    assert torch.equal(x, kept[0]) and torch.equal(perm, kept[1])


def test_lengths_are_not_modified_by_padding_mask(device):
    lengths = torch.tensor([3, 1], device=device)
    padding_mask(lengths, 3)
    assert lengths.tolist() == [3, 1]


def test_module_does_not_change_its_weights_in_forward(gen):
    torch.manual_seed(0)
    module = CausalSelfAttention(8, 2)
    state = {k: v.clone() for k, v in module.state_dict().items()}
    module(torch.randn(2, 5, 8, generator=gen))
    for key, value in module.state_dict().items():
        assert torch.equal(value, state[key]), key


def test_causal_average_and_encoding_are_float32():
    assert causal_average(3).dtype == torch.float32
    assert sinusoidal_encoding(3, 4).dtype == torch.float32


# Bad arguments raise ValueError with a message naming the problem.

BAD_CALLS = [
    ("causal_average T=0", lambda: causal_average(0), r"T must be at least 1"),
    ("causal_mask T_q=0", lambda: causal_mask(0), r"T_q"),
    ("causal_mask T_k=0", lambda: causal_mask(3, 0), r"T_k"),
    ("padding_mask 2-D lengths", lambda: padding_mask(torch.tensor([[1, 2]]), 3), r"1-D"),
    ("padding_mask float lengths", lambda: padding_mask(torch.tensor([1.0, 2.0]), 3), r"integer"),
    ("padding_mask bool lengths", lambda: padding_mask(torch.tensor([True]), 3), r"integer"),
    ("padding_mask length 0", lambda: padding_mask(torch.tensor([0, 2]), 3), r"length"),
    ("padding_mask length > T", lambda: padding_mask(torch.tensor([4, 2]), 3), r"length"),
    ("apply_mask float mask", lambda: apply_mask(torch.zeros(2, 2), torch.ones(2, 2)), r"bool"),
    ("apply_mask int mask", lambda: apply_mask(torch.zeros(2, 2), torch.ones(2, 2, dtype=torch.int64)), r"bool"),
    (
        "combine_masks 3-D causal",
        lambda: combine_masks(torch.ones(1, 3, 3, dtype=torch.bool), torch.ones(2, 3, dtype=torch.bool)),
        r"causal",
    ),
    (
        "combine_masks 1-D padding",
        lambda: combine_masks(torch.ones(3, 3, dtype=torch.bool), torch.ones(3, dtype=torch.bool)),
        r"padding",
    ),
    (
        "combine_masks key count",
        lambda: combine_masks(torch.ones(3, 3, dtype=torch.bool), torch.ones(2, 4, dtype=torch.bool)),
        r"keys",
    ),
    ("attention_scores feature size", lambda: attention_scores(torch.zeros(2, 3, 4), torch.zeros(2, 3, 5)), r"feature"),
    ("attention_weights float mask", lambda: attention_weights(torch.zeros(2, 2), torch.ones(2, 2)), r"bool"),
    (
        "sdpa key counts",
        lambda: scaled_dot_product_attention(torch.zeros(1, 2, 4), torch.zeros(1, 3, 4), torch.zeros(1, 5, 4)),
        r"keys",
    ),
    (
        "sdpa float mask",
        lambda: scaled_dot_product_attention(
            torch.zeros(1, 2, 4), torch.zeros(1, 3, 4), torch.zeros(1, 3, 4), torch.ones(2, 3)
        ),
        r"bool",
    ),
    ("dot_product_spread d=0", lambda: dot_product_spread(0, scaled=True), r"d >= 1.*d=0"),
    ("dot_product_spread n=1", lambda: dot_product_spread(4, 1, scaled=True), r"n >= 2.*n=1"),
    ("split_heads not divisible", lambda: split_heads(torch.zeros(1, 2, 10), 3), r"divisible"),
    ("split_heads zero heads", lambda: split_heads(torch.zeros(1, 2, 10), 0), r"n_heads"),
    ("split_heads 2-D input", lambda: split_heads(torch.zeros(2, 10), 2), r"\(B, T, D\)"),
    ("merge_heads 3-D input", lambda: merge_heads(torch.zeros(2, 3, 4)), r"\(B, H, T, dh\)"),
    ("CausalSelfAttention not divisible", lambda: CausalSelfAttention(10, 3), r"divisible"),
    ("CausalSelfAttention zero heads", lambda: CausalSelfAttention(8, 0), r"n_heads"),
    ("CausalSelfAttention wrong width", lambda: CausalSelfAttention(8, 2)(torch.zeros(1, 3, 6)), r"\(B, T, 8\)"),
    ("CausalSelfAttention 2-D input", lambda: CausalSelfAttention(8, 2)(torch.zeros(3, 8)), r"\(B, T"),
    ("sinusoidal_encoding odd d_model", lambda: sinusoidal_encoding(4, 7), r"even"),
    ("sinusoidal_encoding d_model=0", lambda: sinusoidal_encoding(4, 0), r"d_model"),
    ("sinusoidal_encoding T=0", lambda: sinusoidal_encoding(0, 4), r"T must be at least 1"),
    ("position_similarity 3-D", lambda: position_similarity(torch.zeros(1, 3, 4)), r"pe must be \(T, d\)"),
    ("add_positions 2-D", lambda: add_positions(torch.zeros(3, 4)), r"\(B, T, D\)"),
    ("add_positions odd width", lambda: add_positions(torch.zeros(1, 3, 5)), r"even"),
    (
        "permutation 2-D x",
        lambda: is_permutation_equivariant(lambda t: t, torch.zeros(3, 4), torch.arange(3)),
        r"x must be \(B, T, D\)",
    ),
    (
        "permutation perm length",
        lambda: is_permutation_equivariant(lambda t: t, torch.zeros(1, 3, 4), torch.arange(4)),
        r"perm",
    ),
    ("score_grid_bytes T=0", lambda: score_grid_bytes(0), r"T=0"),
    ("score_grid_bytes n_heads=0", lambda: score_grid_bytes(4, n_heads=0), r"n_heads"),
    ("score_grid_bytes batch=0", lambda: score_grid_bytes(4, batch=0), r"batch"),
    ("block_state feature size", lambda: block_state(torch.zeros(2, 4), torch.zeros(3, 5), torch.zeros(3, 2)), r"feature"),
    ("block_state key counts", lambda: block_state(torch.zeros(2, 4), torch.zeros(3, 4), torch.zeros(5, 2)), r"keys"),
    ("block_state float mask", lambda: block_state(torch.zeros(2, 4), torch.zeros(3, 4), torch.zeros(3, 2),
                                                   torch.ones(2, 3)), r"bool"),
    ("tiled_attention block_size=0", lambda: tiled_attention(torch.zeros(2, 4), torch.zeros(3, 4), torch.zeros(3, 2), 0),
     r"block_size"),
    ("tiled_attention key counts", lambda: tiled_attention(torch.zeros(2, 4), torch.zeros(3, 4), torch.zeros(5, 2)),
     r"keys"),
    ("tiled_score_bytes block_size=0", lambda: tiled_score_bytes(8, 0), r"block_size=0"),
    ("tiled_score_bytes T_q=0", lambda: tiled_score_bytes(0, 4), r"T_q=0"),
    ("time_call repeats=0", lambda: time_call(lambda: None, repeats=0), r"repeats"),
    ("time_call warmup=-1", lambda: time_call(lambda: None, warmup=-1), r"warmup"),
    ("fit_power_law unequal lengths", lambda: fit_power_law([1, 2, 3], [1.0, 2.0]), r"equal length"),
    ("fit_power_law one point", lambda: fit_power_law([1], [1.0]), r"at least two"),
    ("fit_power_law zero T", lambda: fit_power_law([0, 2], [1.0, 2.0]), r"positive"),
    ("fit_power_law negative time", lambda: fit_power_law([1, 2], [1.0, -2.0]), r"positive"),
    ("fit_power_law equal T", lambda: fit_power_law([4, 4, 4], [1.0, 2.0, 3.0]), r"equal"),
]


@pytest.mark.parametrize("call, pattern", [(c, p) for _, c, p in BAD_CALLS], ids=[n for n, _, _ in BAD_CALLS])
def test_bad_arguments_raise_value_error_naming_the_problem(call, pattern):
    with pytest.raises(ValueError, match=pattern):
        call()


def test_time_call_checks_arguments_before_calling_fn():
    calls = []
    with pytest.raises(ValueError):
        time_call(lambda: calls.append(1), repeats=0)
    assert calls == []
