"""Hidden graders for part `scaling`."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

import attention_ref as ref
from autograder.engine.kit import (Hint, ROW_SUM_TOLERANCE, StudentError, as_tensor, check, describe, expect,
                                   expect_close, fail, figures, hint as catalogued, some, tolerance)

PART = "scaling"

DIM = catalogued("scaling.dim")
MAX = catalogued("scaling.max")
XLOGY = catalogued("scaling.xlogy")
SPREAD = catalogued("scaling.spread")
BATCHED = Hint(catalogued("scaling.k_transpose"), "batched inputs fail while smaller ones work: k.T, k.t(), k.transpose(1, 2) and "
               "torch.mm suit only 2-D or 3-D tensors; use k.transpose(-2, -1) and @")
NOT_NEG_INF = "use -inf (or -1e9) for masked scores so their weight is exactly 0"
QUERY_KEY = ("query i", "key j")
QUERY_FEATURE = ("query i", "feature")


def _attention_sizes(gen: torch.Generator, more_keys: bool | None = None) -> tuple[int, int, int, int, int]:
    """B, H >= 2 and T_q, T_k, d all different, so that every axis mix-up shows; T_q < T_k when
    `more_keys`, T_q > T_k when not, either at random when None (causal checks try both)."""
    short, long, d = (int(torch.randint(low, high + 1, (1,), generator=gen)) for low, high in ((3, 6), (7, 9), (10, 14)))
    if more_keys is None:
        more_keys = torch.rand(1, generator=gen).item() < 0.5
    T_q, T_k = (short, long) if more_keys else (long, short)
    return 2, 3, T_q, T_k, d


def _qkv(gen: torch.Generator, *batch: int, more_keys: bool | None = None
         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, int]:
    B, H, T_q, T_k, d = _attention_sizes(gen, more_keys)
    lead = (B, H)[: len(batch)] if batch else (B, H)
    q = torch.randn(*lead, T_q, d, generator=gen)
    k = torch.randn(*lead, T_k, d, generator=gen)
    v = torch.randn(*lead, T_k, d + 3, generator=gen)
    return q, k, v, T_q, T_k


def _call_naming_batch(student, checked: str, name: str, *args: Any, inspect: bool = False) -> Any:
    """student.call (or call_and_inspect), naming the mistake when only the batched form of the call fails."""
    try:
        return student.call_and_inspect(name, *args) if inspect else student.call(name, *args)
    except StudentError as exc:
        if exc.kind == "exception" and _works_with_fewer_batch_axes(student, name, args):
            fail(checked, "a result for batched inputs, as for inputs with fewer batch axes", exc.explain(), BATCHED)
        raise


def _works_with_fewer_batch_axes(student, name: str, args: tuple) -> bool:
    while any(type(a) is torch.Tensor and a.dim() > 2 for a in args):
        args = tuple(a[0] if type(a) is torch.Tensor and a.dim() > 2 else a for a in args)
        try:
            student.call(name, *args)
            return True
        except StudentError:
            continue
    return False




def _pair(got: Any, checked: str) -> tuple[Any, Any]:
    if type(got) not in (tuple, list) or len(got) != 2:
        fail(checked, "a tuple (output, weights)", describe(got), "return both: `return weights @ v, weights`")
    return got[0], got[1]


# ---------------------------------------------------------------- what the usual mistakes compute

def _raw(q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    return q.double() @ k.double().transpose(-2, -1)


def _masked(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    return scores if mask is None else scores.masked_fill(~mask, float("-inf"))


def _score_candidates(q: torch.Tensor, k: torch.Tensor) -> dict[str, torch.Tensor]:
    qk, d = _raw(q, k), q.shape[-1]
    return {
        Hint(catalogued("scaling.sqrt_d_not_d")): qk / d,
        Hint(catalogued("scaling.no_scale"), "unscaled scores grow with d and make the softmax too peaked"): qk,
        Hint(catalogued("scaling.divide_not_multiply"), "scores / √d"): qk * math.sqrt(d),
        Hint(catalogued("scaling.last_dimension"), "q.shape[-1], not the number of keys"): qk / math.sqrt(k.shape[-2]),
        Hint(catalogued("scaling.last_dimension"), "q.shape[-1], not the number of queries"): qk / math.sqrt(q.shape[-2]),
    }


def _weight_candidates(scores: torch.Tensor, mask: torch.Tensor | None) -> dict[str, torch.Tensor]:
    scores = scores.double()
    filled = _masked(scores, mask)
    found = {DIM: torch.softmax(filled, dim=-2)}
    if scores.dim() == 4:
        found[Hint(DIM, "dim=1 is the head axis here")] = torch.softmax(filled, dim=1)
    if mask is not None:
        found.update({
            catalogued("masks.renormalise"): torch.softmax(scores, dim=-1) * mask,
            catalogued("masks.fill_zero"): torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1),
            catalogued("masks.fill_where_false"): torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1),
            "the mask is ignored: fill the scores where it is False before the softmax": torch.softmax(scores, dim=-1),
        })
    return found


def _attention_candidates(q, k, v, mask) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """(weights, outputs) that the usual scaling and softmax mistakes give."""
    weights = {hint: torch.softmax(_masked(s, mask), dim=-1) for hint, s in _score_candidates(q, k).items()}
    weights.update(_weight_candidates(_raw(q, k) / math.sqrt(q.shape[-1]), mask))
    return weights, {hint: w @ v.double() for hint, w in weights.items()}


def _which(got: torch.Tensor, candidates: dict[str, torch.Tensor], device: str) -> str | None:
    atol, rtol = tolerance(device)
    got = got.detach().cpu().double()
    for hint, wrong in candidates.items():
        if wrong.shape == got.shape and torch.allclose(got, wrong, atol=atol, rtol=rtol, equal_nan=True):
            return hint
    return None


def _overflow_hint(unshifted: torch.Tensor) -> str | None:
    """MAX when the same call on ordinary scores was finite: only the size of the scores broke it."""
    return MAX if bool(unshifted.isfinite().all()) else None


def _expect_shift_invariant(got: torch.Tensor, unshifted: torch.Tensor, checked: str,
                            axes: tuple[str, str] = QUERY_KEY) -> None:
    """The submission's own results with and without a shift of every score agree.

    Scores of magnitude M carry a float32 rounding error of about M·6e-8, which a mistaken scale
    (× √d gives M ≈ 1500) turns into weight errors near 1e-4; an overflow or a clamp is off by O(1).
    """
    got, unshifted = got.detach().cpu().double(), unshifted.detach().cpu().double()
    gap = (got - unshifted).abs().nan_to_num(nan=float("inf")).max().item()
    expect(torch.allclose(got, unshifted, atol=1e-3, rtol=1e-3), checked,
           "the same result (softmax is shift-invariant)", f"a largest difference of {gap:.3g}", MAX,
           lambda: [figures.grid(f"{checked} (left: without the shift)", unshifted, got, rows=axes[0], cols=axes[1],
                                 atol=1e-3, rtol=1e-3)])


def _expect_blocked(weights: torch.Tensor, mask: torch.Tensor, checked: str) -> None:
    leaked = weights.cpu()[~mask.cpu().expand(weights.shape)]
    expect(bool((leaked == 0).all()), f"{checked}: the weights where the mask is False", "exactly 0",
           f"largest {leaked.abs().max().item() if leaked.numel() else 0.0:.3g}", NOT_NEG_INF)


def _sdpa(student, device: str, q, k, v, mask, checked: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The submission's (output, weights), checked for type, shape, dtype and device."""
    args = (q, k, v) if mask is None else (q, k, v, mask)
    out, weights = _pair(_call_naming_batch(student, checked, "scaled_dot_product_attention", *(a.to(device) for a in args)), checked)
    weights = as_tensor(weights, f"{checked}: the weights", shape=(*q.shape[:-1], k.shape[-2]),
                        dtype=torch.float32, device=device)
    out = as_tensor(out, f"{checked}: the output", shape=(*q.shape[:-1], v.shape[-1]), dtype=torch.float32, device=device)
    return out, weights


# ---------------------------------------------------------------- attention_scores

def _expect_scores(student, device: str, q: torch.Tensor, k: torch.Tensor) -> None:
    checked = f"attention_scores(q {tuple(q.shape)}, k {tuple(k.shape)})"
    got = as_tensor(_call_naming_batch(student, checked, "attention_scores", q.to(device), k.to(device)), checked,
                    shape=(*q.shape[:-1], k.shape[-2]), dtype=torch.float32, device=device)
    expect_close(got, ref.attention_scores(q.double(), k.double()), checked, device=device,
                 candidates=_score_candidates(q, k), axes=QUERY_KEY)


@check("attention_scores: q kᵀ / √d on 3-D inputs (T_q, T_k and d all different)", points=2)
def test_scores_3d(student, gen, device):
    q, k, _, _, _ = _qkv(gen, 1)
    _expect_scores(student, device, q, k)


@check("attention_scores: q kᵀ / √d on 4-D (B, H, T, d) inputs", points=2)
def test_scores_4d(student, gen, device):
    q, k, _, _, _ = _qkv(gen)
    _expect_scores(student, device, q, k)


# ---------------------------------------------------------------- attention_weights

@check("attention_weights: masked row softmax matches the reference", points=2)
def test_weights_values(student, gen, device):
    B, H, T_q, T_k, _ = _attention_sizes(gen)
    scores = torch.randn(B, H, T_q, T_k, generator=gen) * 3
    mask = torch.rand(B, 1, T_q, T_k, generator=gen) < 0.6
    mask[..., 0] = True  # every query sees at least one key
    for m in (None, mask):
        checked = f"attention_weights(scores {tuple(scores.shape)}" + (")" if m is None else f", mask {tuple(m.shape)})")
        args = (scores,) if m is None else (scores, m)
        got = as_tensor(student.call("attention_weights", *(a.to(device) for a in args)), checked,
                        shape=tuple(scores.shape), dtype=torch.float32, device=device)
        expect_close(got, ref.attention_weights(scores.double(), m), checked, device=device,
                     candidates=_weight_candidates(scores, m), axes=QUERY_KEY)


@check("attention_weights: each row sums to 1, exactly 0 where masked (causal, T_q < T_k and T_q > T_k)", points=1)
def test_weights_rows(student, gen, device):
    for more_keys in (True, False):
        B, _, T_q, T_k, _ = _attention_sizes(gen, more_keys)
        scores = torch.randn(B, T_q, T_k, generator=gen) * 3
        mask = ref.causal_mask(T_q, T_k)
        checked = f"attention_weights(scores {tuple(scores.shape)}, causal_mask({T_q}, {T_k}))"
        got = as_tensor(student.call("attention_weights", scores.to(device), mask.to(device)), checked,
                        shape=(B, T_q, T_k), dtype=torch.float32, device=device)
        hint = _which(got, _weight_candidates(scores, mask), device)
        rows, columns = got.cpu().double().sum(dim=-1), got.cpu().double().sum(dim=-2)
        if hint is None and torch.allclose(columns, torch.ones_like(columns), atol=ROW_SUM_TOLERANCE):
            hint = DIM
        picture = lambda: [figures.grid(checked, ref.attention_weights(scores.double(), mask), got,  # noqa: E731
                                        rows=QUERY_KEY[0], cols=QUERY_KEY[1], atol=ROW_SUM_TOLERANCE)]
        expect(bool(((rows - 1).abs() <= ROW_SUM_TOLERANCE).all()), f"{checked}.sum(dim=-1)", "every row sums to 1",
               f"row sums {some(rows[0].tolist())}", hint, picture)
        leaked = got.cpu()[~mask.expand_as(got)]
        expect(bool((leaked == 0).all()), f"{checked} where the mask is False", "exactly 0",
               f"largest {leaked.abs().max().item():.3g}", hint or NOT_NEG_INF, picture)


@check("attention_weights: stable for large scores (> 100)", points=1)
def test_weights_large(student, gen, device):
    B, H, T_q, T_k, _ = _attention_sizes(gen)
    scores = torch.randn(B, H, T_q, T_k, generator=gen) * 3
    shift = round(100 + 50 * torch.rand(1, generator=gen).item(), 1)
    checked = f"attention_weights(scores + {shift}) for scores {tuple(scores.shape)} of spread 3"
    unshifted = as_tensor(student.call("attention_weights", scores.to(device)), "attention_weights(scores)",
                          shape=tuple(scores.shape), dtype=torch.float32, device=device)
    got = as_tensor(student.call("attention_weights", (scores + shift).to(device)), checked,
                    shape=tuple(scores.shape), dtype=torch.float32, device=device)
    bad = int((~got.isfinite()).sum())
    expect(bad == 0, checked, "finite weights (softmax is shift-invariant)", f"{bad} inf or NaN weights of {got.numel()}",
           _which(got, _weight_candidates(scores + shift, None), device) or _overflow_hint(unshifted),
           lambda: [figures.grid(checked, ref.attention_weights(scores.double()), got, rows=QUERY_KEY[0],
                                 cols=QUERY_KEY[1], atol=1e-3, rtol=1e-3)])
    _expect_shift_invariant(got, unshifted, f"{checked} against attention_weights(scores)")


# ---------------------------------------------------------------- scaled_dot_product_attention

@check("scaled_dot_product_attention: output and weights match the reference (3-D, 4-D, masks)", points=3)
def test_sdpa_values(student, gen, device):
    q3, k3, v3, _, _ = _qkv(gen, 1)
    q, k, v, T_q, T_k = _qkv(gen, more_keys=True)
    qt, kt, vt, T_qt, T_kt = _qkv(gen, more_keys=False)
    lengths = torch.randint(1, T_k + 1, (q.shape[0],), generator=gen)
    lengths[0] = max(1, T_k // 2)  # one padded sequence at least
    cases = ((q3, k3, v3, None, ""), (q, k, v, ref.causal_mask(T_q, T_k), f", causal_mask({T_q}, {T_k})"),
             (qt, kt, vt, ref.causal_mask(T_qt, T_kt), f", causal_mask({T_qt}, {T_kt})"),
             (q, k, v, ref.padding_mask(lengths, T_k)[:, None, None, :], f", key padding mask lengths={lengths.tolist()}"))
    for q, k, v, mask, label in cases:
        checked = f"scaled_dot_product_attention(q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}{label})"
        out, weights = _sdpa(student, device, q, k, v, mask, checked)
        want_out, want_weights = ref.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
        wrong_weights, wrong_outs = _attention_candidates(q, k, v, mask)
        expect_close(weights, want_weights, f"{checked}: the weights", device=device, candidates=wrong_weights,
                     axes=QUERY_KEY)
        if mask is not None:
            _expect_blocked(weights, mask, checked)
        expect_close(out, want_out, f"{checked}: the output", device=device, candidates=wrong_outs,
                     hint="the output is weights @ v", axes=QUERY_FEATURE)


@check("scaled_dot_product_attention: matches torch.nn.functional.scaled_dot_product_attention", points=1)
def test_sdpa_torch(student, gen, device):
    q, k, v, T_q, T_k = _qkv(gen, more_keys=True)
    qt, kt, vt, T_qt, T_kt = _qkv(gen, more_keys=False)
    mask = torch.rand(*q.shape[:-1], T_k, generator=gen) < 0.7
    mask[..., 0] = True
    cases = [(q, k, v, mask, dict(attn_mask=mask), "attn_mask=mask")]
    cases += [(a, b, c, ref.causal_mask(a.shape[-2], b.shape[-2]), dict(is_causal=True), "is_causal=True")
              for a, b, c in ((q, k, v), (qt, kt, vt))]
    for q, k, v, m, how, label in cases:
        checked = (f"scaled_dot_product_attention(q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, "
                   f"mask {tuple(m.shape)})[0] against F.scaled_dot_product_attention(..., {label})")
        want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), **how)
        out, _ = _sdpa(student, device, q, k, v, m, checked)
        expect_close(out, want, checked, device=device, candidates=_attention_candidates(q, k, v, m)[1],
                     axes=QUERY_FEATURE)


@check("scaled_dot_product_attention: stable for large scores (> 100)", points=1)
def test_sdpa_large(student, gen, device):
    B, H, T_q, T_k, d = _attention_sizes(gen)
    q, k = torch.randn(B, H, T_q, d, generator=gen), torch.randn(B, H, T_k, d, generator=gen)
    v = 2 + 0.5 * torch.randn(B, H, T_k, d, generator=gen)  # outputs far from 0, so rtol covers float32 scores
    # feature 0 is 0 in q and k; setting it to a in both adds a² / √d = 120 to every score
    q[..., 0], k[..., 0] = 0.0, 0.0
    q_big, k_big = q.clone(), k.clone()
    q_big[..., 0], k_big[..., 0] = (120 * math.sqrt(d)) ** 0.5, (120 * math.sqrt(d)) ** 0.5
    checked = "scaled_dot_product_attention(q, k, v) with every score raised by 120 (scores > 100)"
    plain_out, plain_weights = _sdpa(student, device, q, k, v, None, "scaled_dot_product_attention(q, k, v)")
    out, weights = _sdpa(student, device, q_big, k_big, v, None, checked)
    bad = int((~weights.isfinite()).sum()) + int((~out.isfinite()).sum())
    expect(bad == 0, checked, "finite weights and output (softmax is shift-invariant)", f"{bad} inf or NaN entries",
           _which(weights, _attention_candidates(q_big, k_big, v, None)[0], device) or _overflow_hint(plain_weights),
           lambda: [figures.grid(f"{checked}: the weights (left: without the raise)", plain_weights, weights,
                                 rows=QUERY_KEY[0], cols=QUERY_KEY[1], atol=1e-3, rtol=1e-3)])
    _expect_shift_invariant(weights, plain_weights, f"{checked}: the weights, against those without the raise")
    _expect_shift_invariant(out, plain_out, f"{checked}: the output, against that without the raise", QUERY_FEATURE)


@check("attention_scores, attention_weights, scaled_dot_product_attention: inputs not modified", points=1)
def test_pure(student, gen):
    q, k, v, T_q, T_k = _qkv(gen)
    scores = torch.randn(*q.shape[:-1], T_k, generator=gen)
    mask = ref.causal_mask(T_q, T_k)
    calls = (("attention_scores", ("q", "k"), (q, k)), ("attention_weights", ("scores", "mask"), (scores, mask)),
             ("scaled_dot_product_attention", ("q", "k", "v", "mask"), (q, k, v, mask)))
    for name, labels, args in calls:
        _, after = _call_naming_batch(student, f"{name}({', '.join(labels)})", name, *args, inspect=True)
        changed = [label for label, before, now in zip(labels, args, after)
                   if type(now) is not torch.Tensor or now.shape != before.shape or not torch.equal(now, before)]
        expect(not changed, f"the arguments of {name}({', '.join(labels)}) after the call", "unchanged",
               f"{', '.join(changed)} changed in place", Hint(catalogued("masks.pure"), "no q /= ..., masked_fill_ or out= on them"))


# ---------------------------------------------------------------- dot_product_spread

# A quarter of the contract's default (n is the caller's to choose): a band (_band) of 12 to 14 %, where the known
# slips are √d (at least 2.8) times off; the draws, in the submission's process, were most of this part's cost.
SPREAD_N = 2_500


def _seed(gen: torch.Generator) -> int:
    return int(torch.randint(0, 2**62, (1,), generator=gen))


def _spread(student, d: int, scaled: bool, seed: int, n: int = SPREAD_N) -> float:
    """What the submission's dot_product_spread gives with a generator seeded with `seed`."""
    checked = f"dot_product_spread({d}, {n}, scaled={scaled}, generator=torch.Generator().manual_seed({seed}))"
    got = student.call("dot_product_spread", d, n, scaled=scaled, generator=student.generator(seed))
    if type(got) in (int, float) or (type(got) is torch.Tensor and got.numel() == 1 and got.dtype.is_floating_point):
        return float(got)
    fail(checked, "a number (a Python float)", describe(got), "return a Python float: float(...) or .item()")


def _band(d: int, n: int = SPREAD_N) -> float:
    """A relative band around the true std that a correct answer leaves with probability far below 1e-12.

    The sample std of n draws of a sum of d products of standard normals (excess kurtosis 6/d) has a
    relative standard error of sqrt((2 + 6/d) / (4n)); the band is at least 8 of those.
    """
    return max(0.05, 8 * math.sqrt((2 + 6 / d) / (4 * n)))


def _spread_hint(got: float, d: int, scaled: bool) -> Hint:
    if scaled and abs(got / math.sqrt(d) - 1) < _band(d):
        return Hint(SPREAD, "then divide by √d when scaled=True")
    if abs(got * (math.sqrt(d) if scaled else 1) - 1) < _band(d):
        return Hint(SPREAD, "this is the std of the n·d single products: sum over the d features first")
    if abs(got / math.sqrt(SPREAD_N) * (math.sqrt(d) if scaled else 1) - 1) < 0.5:  # a std of only d sums
        return Hint(SPREAD, "this sums over the n samples: sum over the d features, dim=-1")
    return Hint(SPREAD, "each the sum over d features of products of standard normals")


def _expect_spread(student, gen, scaled: bool) -> None:
    """About √d (or 1) for two widths, each from two generators of different seeds, whose samples must
    differ: a number that is not drawn fails however close it is."""
    small, large = int(torch.randint(8, 21, (1,), generator=gen)), int(torch.randint(40, 81, (1,), generator=gen))
    for d in (small, large):
        want, band = 1.0 if scaled else math.sqrt(d), _band(d)
        seeds = (_seed(gen), _seed(gen))
        got = [_spread(student, d, scaled, seed) for seed in seeds]
        for value in got:
            expect(abs(value / want - 1) <= band, f"dot_product_spread({d}, {SPREAD_N}, scaled={scaled})",
                   f"about {want:.3g} (within {band:.0%})", f"{value:.3g}", _spread_hint(value, d, scaled))
        expect(got[0] != got[1], f"dot_product_spread({d}, {SPREAD_N}, scaled={scaled}) with generators seeded "
               f"{seeds[0]} and {seeds[1]}", "two different samples, so two slightly different spreads",
               f"{got[0]!r} both times", "draw the n dot products with torch.randn(..., generator=generator)")


@check("dot_product_spread: about √d unscaled", points=1)
def test_spread_unscaled(student, gen):
    _expect_spread(student, gen, scaled=False)


@check("dot_product_spread: about 1 when scaled", points=1)
def test_spread_scaled(student, gen):
    _expect_spread(student, gen, scaled=True)


@check("dot_product_spread: a Python float, drawn with the generator given (same seed, same value)", points=1)
def test_spread_float(student, gen):
    d, seed = int(torch.randint(4, 9, (1,), generator=gen)), _seed(gen)
    checked = f"dot_product_spread({d}, 1000, scaled=True, generator=torch.Generator().manual_seed({seed}))"
    got = student.call("dot_product_spread", d, 1000, scaled=True, generator=student.generator(seed))
    hint = ".item() turns a 0-d tensor into a float" if type(got) is torch.Tensor else "return float(...)"
    expect(type(got) is float, f"type({checked})", "float", describe(got), hint)
    again = student.call("dot_product_spread", d, 1000, scaled=True, generator=student.generator(seed))
    expect(again == got, f"{checked}, called twice", "the same value both times (the same seed draws the same "
           "sample)", f"{got!r}, then {again!r}", "draw with the generator passed in: torch.randn(..., "
           "generator=generator)")


# ---------------------------------------------------------------- softmax_entropy

def _entropy(student, device: str, weights: torch.Tensor, checked: str) -> torch.Tensor:
    return as_tensor(student.call("softmax_entropy", weights.to(device)), checked,
                     shape=tuple(weights.shape[:-1]), dtype=torch.float32, device=device)


def _entropy_candidates(weights: torch.Tensor) -> dict[str, torch.Tensor]:
    plogp = torch.special.xlogy(weights.double(), weights.double()).sum(dim=-1)
    return {"entropy in nats: the natural log, not log2": -plogp / math.log(2),
            "entropy is minus the sum of p log p": plogp}


@check("softmax_entropy: values match the reference", points=1)
def test_entropy_values(student, gen, device):
    B, H, _, T_k, _ = _attention_sizes(gen)
    weights = torch.softmax(torch.randn(B, H, T_k, generator=gen) * 2, dim=-1)
    checked = f"softmax_entropy(weights {tuple(weights.shape)})"
    expect_close(_entropy(student, device, weights, checked), ref.softmax_entropy(weights.double()), checked,
                 device=device, candidates=_entropy_candidates(weights), axes=("batch b", "head h"))


@check("softmax_entropy: a zero weight contributes 0, not NaN", points=1)
def test_entropy_zeros(student, gen, device):
    B, H, T_q, T_k, _ = _attention_sizes(gen)
    scores = torch.randn(B, H, T_q, T_k, generator=gen) * 2
    weights = ref.attention_weights(scores, ref.causal_mask(T_q, T_k))  # row 0 is one-hot: entropy 0
    checked = f"softmax_entropy(causal attention weights {tuple(weights.shape)}, with zeros above the diagonal)"
    got = _entropy(student, device, weights, checked)
    bad = int(got.isnan().sum())
    expect(bad == 0, checked, "no NaN (a zero weight contributes 0)", f"{bad} NaN of {got.numel()} entropies", XLOGY,
           lambda: [figures.grid(checked, ref.softmax_entropy(weights.double()), got, rows="head h", cols="query i",
                                 atol=1e-5, rtol=1e-4)])
    expect_close(got, ref.softmax_entropy(weights.double()), checked, device=device,
                 candidates=_entropy_candidates(weights), axes=("head h", "query i"))


@check("softmax_entropy: uniform weights over T keys give ln T", points=1)
def test_entropy_uniform(student, gen, device):
    B, _, T_q, T_k, _ = _attention_sizes(gen)
    weights = torch.full((B, T_q, T_k), 1.0 / T_k)
    checked = f"softmax_entropy(uniform weights 1/{T_k}, shape {tuple(weights.shape)})"
    want = torch.full((B, T_q), math.log(T_k), dtype=torch.float64)
    expect_close(_entropy(student, device, weights, checked), want, checked, device=device,
                 candidates=_entropy_candidates(weights))
