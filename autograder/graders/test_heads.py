"""Hidden graders for part `heads`.

A module that draws random numbers as it computes (dropout, active while it is in training mode, as it is
until .eval()) fails every check of its values, each in its own way: when one of those checks fails, a
diagnosis calls a fresh module twice on one fixed input, and every failed check it covers names dropout
when the two answers differ.
"""

from __future__ import annotations

import math
import re
from typing import Any

import pytest
import torch

import attention_ref as ref
from autograder.engine.kit import (Diagnosis, Hint, StudentError, as_tensor, bounded_numel, check, covering, describe,
                                   diagnosed, draw, expect, expect_close, fail, hint as catalogued, root_cause, some,
                                   tolerance)

PART = "heads"

VIEW_HINT = catalogued("heads.contiguous")
SPLIT_NO_TRANSPOSE = catalogued("heads.split_no_transpose")
MERGE_NO_TRANSPOSE = catalogued("heads.merge_no_transpose")
STRIDED_HEADS = catalogued("heads.strided_heads")
QKV_ORDER = catalogued("heads.qkv_order")
LAYOUT = catalogued("heads.layout")
D_MODEL_SCALE = catalogued("scaling.head_dimension")
ON_DEVICE = catalogued("masks.on_device")
PER_HEAD = catalogued("heads.per_head")
PURE = catalogued("masks.pure")
TRANSPOSED = catalogued("masks.transposed")
DROPOUT = catalogued("heads.dropout")
LAYOUT_DETAIL = ("qkv = nn.Linear(d_model, 3 * d_model), proj = nn.Linear(d_model, d_model), both with bias, "
                 "no other parameters; buffers are fine")
# The contract's parameters, shapes in units of d_model.
LAYOUT_SHAPES = {"qkv.weight": (3, 1), "qkv.bias": (3,), "proj.weight": (1, 1), "proj.bias": (1,)}
TOKEN_FEATURE = ("token t", "feature")
QUERY_KEY = ("query i", "key j")



def _head_sizes(gen: torch.Generator) -> tuple[int, int, int, int]:
    """(B, T, H, dh) with B, H, T >= 2 and T != dh, so that mixed-up axes show."""
    B, H, dh, T = draw(gen, 2, 3, 1) + draw(gen, 2, 4, 1) + draw(gen, 3, 6, 1) + draw(gen, 5, 9, 1)
    return B, T + (T == dh), H, dh


def _module_sizes(gen: torch.Generator) -> tuple[int, int, int, int]:
    """(B, T, H, D) for the module: B, H >= 2, T not the head size."""
    B, H, T = 2, draw(gen, 3, 4, 1)[0], draw(gen, 5, 9, 1)[0]
    return B, T, H, 48


def _call_naming_view(student, checked: str, target: Any, *args: Any, inspect: bool = False) -> Any:
    """student.call (or call_and_inspect), naming the mistake when `.view` meets a non-contiguous tensor."""
    try:
        return student.call_and_inspect(target, *args) if inspect else student.call(target, *args)
    except StudentError as exc:
        if exc.type == "RuntimeError" and re.search(r"\bview\b|contiguous", exc.message):
            fail(checked, "a result", exc.explain(), VIEW_HINT)
        raise


# ---------------------------------------------------------------- what the usual mistakes compute

def _split(x: torch.Tensor, H: int, how: str = "ok") -> torch.Tensor:
    B, T, D = x.shape
    if how == "no_transpose":
        return x.reshape(B, H, T, D // H)
    if how == "strided":
        return x.reshape(B, T, D // H, H).permute(0, 3, 1, 2)
    return x.reshape(B, T, H, D // H).transpose(1, 2)


def _merge(x: torch.Tensor, how: str = "ok") -> torch.Tensor:
    B, H, T, dh = x.shape
    if how == "no_transpose":
        return x.reshape(B, T, H * dh)
    if how == "strided":
        return x.permute(0, 2, 3, 1).reshape(B, T, H * dh)
    return x.transpose(1, 2).reshape(B, T, H * dh)


def _split_candidates(x: torch.Tensor, H: int) -> dict[Hint, torch.Tensor]:
    return {Hint(SPLIT_NO_TRANSPOSE, "reshape(B, H, T, dh) mixes tokens into the heads"): _split(x, H, "no_transpose"),
            Hint(STRIDED_HEADS, "split_heads takes every H-th feature"): _split(x, H, "strided")}


def _merge_candidates(y: torch.Tensor) -> dict[Hint, torch.Tensor]:
    return {Hint(MERGE_NO_TRANSPOSE, "reshape(B, T, D) of (B, H, T, dh) mixes the heads into the tokens"):
                _merge(y, "no_transpose"),
            Hint(STRIDED_HEADS, "merge_heads interleaves the heads' features"): _merge(y, "strided")}


def _attend(x: torch.Tensor, state: dict[str, torch.Tensor], H: int, *, order: str = "qkv", interleave: bool = False,
            scale: str = "head", causal: bool = True, split: str = "ok", merge: str = "ok",
            proj: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    """The module's forward pass in float64, optionally with one of the usual mistakes."""
    x = x.double()
    B, T, D = x.shape
    dh = D // H
    fused = x @ state["qkv.weight"].double().T + state["qkv.bias"].double()
    if interleave:
        q, k, v = fused.reshape(B, T, H, 3 * dh).transpose(1, 2).split(dh, dim=-1)
    else:
        named = dict(zip(order, fused.split(D, dim=-1)))
        q, k, v = (_split(named[name], H, split) for name in "qkv")
    scores = q @ k.transpose(-2, -1) / {"head": math.sqrt(dh), "model": math.sqrt(D), "none": 1.0}[scale]
    if causal:
        scores = scores.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    out = _merge(weights @ v, merge)
    if proj:
        out = out @ state["proj.weight"].double().T + state["proj.bias"].double()
    return out, weights


def _module_candidates(x: torch.Tensor, state: dict[str, torch.Tensor],
                       H: int) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Likely mistake -> (output, weights) it would give with these weights."""
    found: dict[Hint, tuple[torch.Tensor, torch.Tensor]] = {}
    for order in ("kqv", "qvk", "kvq", "vqk", "vkq"):
        found[Hint(QKV_ORDER, f"got them as [{' | '.join(order)}]")] = _attend(x, state, H, order=order)
    found[Hint(QKV_ORDER, "not interleaved per head")] = _attend(x, state, H, interleave=True)
    found[Hint(D_MODEL_SCALE, "d_model // n_heads, not d_model")] = _attend(x, state, H, scale="model")
    found[Hint(catalogued("scaling.no_scale"), "the head dimension: the scores are not scaled")] = _attend(x, state, H, scale="none")
    found[Hint("query i may attend only keys j <= i: apply the causal mask")] = _attend(x, state, H, causal=False)
    found[Hint(LAYOUT, "apply self.proj to the merged heads")] = _attend(x, state, H, proj=False)
    found[Hint(f"{SPLIT_NO_TRANSPOSE}; {MERGE_NO_TRANSPOSE}", "in split_heads and in merge_heads")] = _attend(
        x, state, H, split="no_transpose", merge="no_transpose")
    found[Hint(SPLIT_NO_TRANSPOSE, "in split_heads")] = _attend(x, state, H, split="no_transpose")
    found[Hint(MERGE_NO_TRANSPOSE, "in merge_heads")] = _attend(x, state, H, merge="no_transpose")
    found[Hint(STRIDED_HEADS, "split_heads and merge_heads use a (dh, H) layout")] = _attend(
        x, state, H, split="strided", merge="strided")
    found[Hint(STRIDED_HEADS, "in split_heads")] = _attend(x, state, H, split="strided")
    found[Hint(STRIDED_HEADS, "in merge_heads")] = _attend(x, state, H, merge="strided")
    out, weights = _attend(x, state, H)
    found[Hint(TRANSPOSED, "return the weights as (B, H, T_q, T_k)")] = (out, weights.transpose(-2, -1))
    return found


MODULE_STEPS = ("compare each step with the contract: qkv(x) split [q | k | v], split_heads, scores / √d_head, "
                "causal mask, softmax(dim=-1), weights @ v, merge_heads, proj")


def _module_hint(out: Any, weights: Any, x: torch.Tensor, state: dict[str, torch.Tensor], H: int) -> Hint | str:
    """The mistake whose output (and weights, when comparable) the module reproduces, else the steps to check."""
    if type(out) is not torch.Tensor:
        return MODULE_STEPS
    atol, rtol = tolerance("cpu")
    for hint, (want_out, want_w) in _module_candidates(x, state, H).items():
        if out.shape != want_out.shape or not torch.allclose(out.double(), want_out, atol=atol, rtol=rtol):
            continue
        if type(weights) is torch.Tensor and weights.shape == want_w.shape and not torch.allclose(
                weights.double(), want_w, atol=atol, rtol=rtol):
            continue
        return hint
    return MODULE_STEPS


# ---------------------------------------------------------------- the module, through plain data

def _contract_shapes(D: int) -> dict[str, tuple[int, ...]]:
    return {name: tuple(n * D for n in units) for name, units in LAYOUT_SHAPES.items()}


def _contract_state(gen: torch.Generator, D: int, scale: float) -> dict[str, torch.Tensor]:
    return {name: torch.randn(shape, generator=gen) * scale for name, shape in _contract_shapes(D).items()}


def _load(student, handle: Any, values: dict[str, torch.Tensor], checked: str) -> None:
    """Fill the module's parameters with `values`; its buffers (a registered mask) are left alone."""
    try:
        student.method(handle, "load_parameters", values)
    except StudentError as exc:
        if exc.kind != "exception":
            raise
        fail(checked, f"a module whose parameters are exactly {', '.join(f'{n} {tuple(v.shape)}' for n, v in values.items())}",
             f"{exc.type}: {exc.message[:300]}", Hint(LAYOUT, LAYOUT_DETAIL))


def _contract_module(student, gen: torch.Generator, D: int, H: int, scale: float):
    """The student's module holding the same random weights as a reference module."""
    state = _contract_state(gen, D, scale)
    handle = student.construct("CausalSelfAttention", D, H)
    _load(student, handle, state, f"CausalSelfAttention({D}, {H}) with the reference's weights loaded")
    reference = ref.CausalSelfAttention(D, H)
    reference.load_state_dict(state)
    return handle, state, reference


def _own_module(student, gen: torch.Generator, D: int, H: int):
    """The student's module with its own parameter names, refilled with large random weights from `gen`."""
    checked = f"CausalSelfAttention({D}, {H}) with random weights in its own parameters"
    handle = student.construct("CausalSelfAttention", D, H)
    shapes = _parameter_shapes(student, handle, checked)
    scale = 1.5 / math.sqrt(D)
    _load(student, handle, {name: torch.randn(shape, generator=gen) * scale for name, shape in shapes.items()}, checked)
    return handle


MAX_PARAMETER_ELEMENTS = 2**24  # far beyond any module of the layout at the sizes graded


def _parameter_shapes(student, handle: Any, checked: str) -> dict[str, tuple[int, ...]]:
    """The module's parameter shapes as it reports them, bounded before anything is computed from them:
    at most 64 parameters of at most 8 dimensions, MAX_PARAMETER_ELEMENTS elements in all."""
    shapes = student.method(handle, "parameter_shapes")
    if type(shapes) is not dict or len(shapes) > 64 or not all(
            type(s) in (tuple, list) and len(s) <= 8 and all(type(n) is int and n >= 0 for n in s) for s in shapes.values()):
        fail(checked, "named parameters", str(shapes)[:80], LAYOUT)
    left = MAX_PARAMETER_ELEMENTS
    for s in shapes.values():
        left -= bounded_numel(s, left + 1)
        if left < 0:
            fail(checked, f"a module of at most {MAX_PARAMETER_ELEMENTS:,} parameters", "more", LAYOUT)
    return {name: tuple(s) for name, s in shapes.items()}


def _forward(student, handle: Any, x: torch.Tensor, H: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, weights) of the module on x, each checked for its shape (and device, off the CPU)."""
    B, T, D = x.shape
    call = f"CausalSelfAttention({D}, {H})(x {tuple(x.shape)} on {x.device.type})"
    try:
        got = _call_naming_view(student, call, handle, x)
    except StudentError as exc:
        if x.device.type != "cpu" and exc.kind == "exception" and "device" in exc.message:
            fail(call, f"a result on {x.device.type}", exc.explain(), ON_DEVICE)
        raise
    if type(got) not in (tuple, list) or len(got) != 2:
        fail(call, "a tuple (output (B, T, D), weights (B, H, T, T))", describe(got),
             "return both: (self.proj(merged heads), the attention weights)")
    out = as_tensor(got[0], f"the output of {call}", shape=(B, T, D), device=x.device, device_hint=ON_DEVICE)
    if type(got[1]) is torch.Tensor and tuple(got[1].shape) == (B, T, T):
        fail(f"the attention weights of {call}", f"shape {(B, H, T, T)}: one (T, T) grid per head",
             f"shape {(B, T, T)}", Hint(PER_HEAD, "these are averaged over the heads, as nn.MultiheadAttention's "
                                                  "weights are by default"))
    weights = as_tensor(got[1], f"the attention weights of {call}", shape=(B, H, T, T), device=x.device,
                        device_hint=ON_DEVICE)
    return out.cpu(), weights.cpu()




# ---------------------------------------------------------------- a root cause, probed once per submission

def _dropout_probe(student) -> Hint | None:
    """A fresh module called twice on one fixed input: a module that computes without drawing random numbers
    answers the same both times; one with dropout in training mode (its default) does not."""
    B, T, H, D = 2, 16, 4, 48  # 2,048 weights and 1,536 outputs: dropout at 0.1 changes some every call
    x = torch.randn(B, T, D, generator=torch.Generator().manual_seed(30))
    handle = student.construct("CausalSelfAttention", D, H)
    answers = [student.call(handle, x) for _ in range(2)]
    if not all(type(a) in (tuple, list) and len(a) == 2 and all(type(t) is torch.Tensor for t in a) for a in answers):
        return None
    first, second = answers
    atol, rtol = tolerance("cpu")
    if all(a.shape == b.shape and torch.allclose(a, b, atol=atol, rtol=rtol, equal_nan=True)
           for a, b in zip(first, second)):
        return None
    return Hint(DROPOUT, "two calls on the same input gave different answers")


@pytest.fixture(scope="module")
def diagnoses(student) -> dict[str, Diagnosis]:
    return {"CausalSelfAttention": Diagnosis(lambda: _dropout_probe(student))}


@pytest.fixture(autouse=True)
def _named_once(request, diagnoses):
    """A failed check the diagnosis covers names the root cause it finds, if any."""
    with root_cause(*covering(request.function, diagnoses)):
        yield


# ---------------------------------------------------------------- split_heads and merge_heads

def _rearrangement_hint(got: torch.Tensor, x: torch.Tensor, moved: Hint) -> Hint | str:
    """`moved` when `got` holds exactly the values of `x` in another order; else say that values changed."""
    if got.numel() == x.numel() and torch.equal(got.detach().cpu().flatten().sort().values, x.flatten().sort().values):
        return moved
    return "only rearrange the entries (reshape, transpose): every value of x must come back unchanged"


@check("split_heads: shape (B, H, T, D // H)", points=1)
def test_split_heads_shape(student, gen):
    B, T, H, dh = _head_sizes(gen)
    x = torch.randn(B, T, H * dh, generator=gen)
    checked = f"split_heads(x {tuple(x.shape)}, n_heads={H})"
    got = as_tensor(_call_naming_view(student, checked, "split_heads", x, H), checked)
    hint = SPLIT_NO_TRANSPOSE if tuple(got.shape) == (B, T, H, dh) else None
    expect(tuple(got.shape) == (B, H, T, dh), checked, f"shape {(B, H, T, dh)}", f"shape {tuple(got.shape)}", hint)


@check("split_heads: head h holds features h*dh : (h+1)*dh", points=2)
def test_split_heads_values(student, gen, device):
    B, T, H, dh = _head_sizes(gen)
    x = torch.randn(B, T, H * dh, generator=gen)
    checked = f"split_heads(x {tuple(x.shape)}, n_heads={H})"
    got = as_tensor(_call_naming_view(student, checked, "split_heads", x.to(device), H), checked, dtype=x.dtype, device=device)
    expect_close(got, ref.split_heads(x, H), checked, device=device, candidates=_split_candidates(x, H),
                 hint=_rearrangement_hint(got, x, Hint(SPLIT_NO_TRANSPOSE, "head h holds features h*dh:(h+1)*dh")),
                 axes=TOKEN_FEATURE)


@check("merge_heads: puts the heads back side by side", points=2)
def test_merge_heads_values(student, gen, device):
    B, T, H, dh = _head_sizes(gen)
    y = torch.randn(B, H, T, dh, generator=gen)
    checked = f"merge_heads(x {tuple(y.shape)})"
    got = as_tensor(_call_naming_view(student, checked, "merge_heads", y.to(device)), checked, dtype=y.dtype, device=device)
    expect_close(got, ref.merge_heads(y), checked, device=device, candidates=_merge_candidates(y),
                 hint=_rearrangement_hint(got, y, Hint(MERGE_NO_TRANSPOSE, "token t holds head h at h*dh:(h+1)*dh")),
                 axes=TOKEN_FEATURE)


@check("split_heads -> merge_heads gives back the input exactly", points=2)
def test_split_merge_round_trip(student, gen, device):
    B, T, H, dh = _head_sizes(gen)
    x = torch.randn(B, T, H * dh, generator=gen)
    checked = f"merge_heads(split_heads(x {tuple(x.shape)}, n_heads={H}))"
    split = as_tensor(_call_naming_view(student, checked, "split_heads", x.to(device), H), checked, device=device)
    merged = _call_naming_view(student, checked, "merge_heads", split)
    merged = as_tensor(merged, checked, shape=tuple(x.shape), device=device).cpu()
    if torch.equal(merged, x):
        return
    split = split.cpu()
    hint = None
    if split.shape == (B, H, T, dh) and not torch.equal(split, ref.split_heads(x, H)):
        hint = next((h for h, wrong in _split_candidates(x, H).items() if torch.equal(split, wrong)), None)
    elif split.shape == (B, H, T, dh):
        hint = next((h for h, wrong in _merge_candidates(split).items() if torch.equal(merged, wrong)), None)
    differ = merged != x
    b, t, f = (int(i) for i in differ.nonzero()[0])
    fail(checked, f"x itself, every entry equal (x[{b}, {t}, {f}] = {x[b, t, f].item():.4g})",
         f"{merged[b, t, f].item():.4g} there ({int(differ.sum())} of {x.numel()} entries moved or changed)",
         hint or "merge_heads must undo split_heads exactly")


@check("split_heads and CausalSelfAttention: D not divisible by n_heads raises ValueError", points=1)
def test_indivisible_raises(student, gen):
    H, dh = draw(gen, 3, 4, 1)[0], draw(gen, 3, 6, 1)[0]
    D = H * dh + 1
    x = torch.randn(2, 5, D, generator=gen)
    hint = (f"check that the feature size is divisible by n_heads ({D} % {H} = {D % H}) before reshaping, "
            "and raise ValueError with a message that names the problem")
    attempts = ((f"split_heads(x {tuple(x.shape)}, n_heads={H})", lambda: student.call("split_heads", x, H)),
                (f"CausalSelfAttention({D}, {H})", lambda: student.construct("CausalSelfAttention", D, H)))
    for checked, attempt in attempts:
        try:
            got = attempt()
        except StudentError as exc:
            if exc.kind != "exception":
                raise
            expect(exc.type == "ValueError" and exc.message.strip() != "", checked,
                   "ValueError with a message that names the problem", f"{exc.type}: {exc.message[:120]!r}", hint)
            continue
        fail(checked, "ValueError with a message that names the problem", f"no error ({describe(got)})", hint)


# ---------------------------------------------------------------- CausalSelfAttention

@check("CausalSelfAttention: parameters qkv.weight, qkv.bias, proj.weight, proj.bias (16,640 at d_model=64)", points=2)
def test_module_parameters(student, gen):
    D, H = 64, 4
    checked = f"CausalSelfAttention({D}, {H}) named parameters"
    shapes = _parameter_shapes(student, student.construct("CausalSelfAttention", D, H), checked)
    want = _contract_shapes(D)
    if shapes != want:
        total = sum(bounded_numel(s, MAX_PARAMETER_ELEMENTS + 1) for s in shapes.values())
        missing = [n for n in want if n not in shapes]
        extra = [n for n in shapes if n not in want]
        reshaped = [f"{n} {shapes[n]}" for n in want if n in shapes and shapes[n] != want[n]]
        details = "; ".join(part for part in (
            f"missing {', '.join(missing)}" if missing else "",
            f"unexpected {', '.join(extra[:4])}{', ...' if len(extra) > 4 else ''}" if extra else "",
            f"wrong shape {', '.join(reshaped)}" if reshaped else "") if part)
        fail(checked, ", ".join(f"{n} {s}" for n, s in want.items()) + ": 16,640 parameters",
             f"{total:,} parameters; {details}", Hint(LAYOUT, LAYOUT_DETAIL))


@check("CausalSelfAttention: returns (output (B, T, D), weights (B, H, T, T)) in float32", points=1)
def test_module_shapes(student, gen):
    B, T, H, D = _module_sizes(gen)
    x = torch.randn(B, T, D, generator=gen)
    out, weights = _forward(student, student.construct("CausalSelfAttention", D, H), x, H)
    for name, got in (("output", out), ("attention weights", weights)):
        expect(got.dtype == torch.float32, f"the {name} of CausalSelfAttention({D}, {H})(x {tuple(x.shape)})",
               "dtype torch.float32", f"dtype {got.dtype}")


def _compare_with_reference(student, gen, device: str, weight_scale: float, which: int, what: str, loaded: str) -> None:
    """Load the same random weights into the submission's module and the reference, compare
    output (which=0) or attention weights (which=1) on `device`, and name the mistake when they differ."""
    B, T, H, D = _module_sizes(gen)
    handle, state, reference = _contract_module(student, gen, D, H, weight_scale / math.sqrt(D))
    if device != "cpu":
        student.method(handle, "to", device)
    x = torch.randn(B, T, D, generator=gen)
    got = _forward(student, handle, x.to(device), H)
    with torch.no_grad():
        want = reference(x)[which]
    expect_close(got[which], want, f"the {what} of CausalSelfAttention({D}, {H})(x {tuple(x.shape)}) on {device}, "
                 f"{loaded}", hint=_module_hint(*got, x, state, H), device=device,
                 axes=QUERY_KEY if which else TOKEN_FEATURE)


@diagnosed("CausalSelfAttention")
@check("CausalSelfAttention: output matches the reference with the same weights", points=3)
def test_module_output(student, gen, device):
    _compare_with_reference(student, gen, device, 0.6, 0, "output", "reference weights loaded")


@diagnosed("CausalSelfAttention")
@check("CausalSelfAttention: attention weights match the reference (large weights)", points=2)
def test_module_weights(student, gen, device):
    _compare_with_reference(student, gen, device, 1.5, 1, "attention weights", "large reference weights loaded")


@diagnosed("CausalSelfAttention")
@check("CausalSelfAttention: weights rows sum to 1, exactly 0 above the diagonal", points=1)
def test_module_weights_properties(student, gen):
    B, T, H, D = _module_sizes(gen)
    handle = _own_module(student, gen, D, H)
    x = torch.randn(B, T, D, generator=gen)
    _, weights = _forward(student, handle, x, H)
    checked = f"the attention weights of CausalSelfAttention({D}, {H})(x {tuple(x.shape)})"
    weights = weights.double()
    sums = weights.sum(dim=-1)
    gap = (sums - 1).abs().nan_to_num(nan=float("inf")).max().item()
    if gap > 1e-5:
        hint = catalogued("scaling.dim")
        if not bool(weights.isfinite().all()):
            hint = "the weights hold NaN or inf: mask with -inf before the softmax, and subtract the row max"
        elif bool(((weights.sum(dim=-2) - 1).abs() <= 1e-5).all()):
            hint = Hint(TRANSPOSED, catalogued("scaling.dim"))
        fail(f"{checked}.sum(dim=-1)", "every row sums to 1",
             f"row sums off by up to {gap:.3g} (of sequence 0, head 0: {some(sums[0, 0].tolist())})", hint)
    above = weights.triu(1)
    if bool((above != 0).any()):
        b, h, i, j = (int(v) for v in (above != 0).nonzero()[0])
        fail(f"{checked}[{b}, {h}, {i}, {j}] (query {i}, key {j} in its future)", "exactly 0",
             f"{weights[b, h, i, j].item():.3g}", "query i may attend only keys j <= i: apply the causal mask")


@diagnosed("CausalSelfAttention")
@check("CausalSelfAttention: changing future tokens leaves past outputs unchanged", points=2)
def test_module_causality(student, gen):
    B, T, H, D = _module_sizes(gen)
    handle = _own_module(student, gen, D, H)
    cut = draw(gen, 1, T - 3, 1)[0]  # tokens 0..cut stay, the later ones change
    x = torch.randn(B, T, D, generator=gen)
    changed = x.clone()
    changed[:, cut + 1:] = torch.randn(B, T - cut - 1, D, generator=gen) * 3
    out, weights = _forward(student, handle, x, H)
    out2, weights2 = _forward(student, handle, changed, H)
    gap = max((out - out2)[:, :cut + 1].abs().nan_to_num(nan=float("inf")).max().item(),
              (weights - weights2)[:, :, :cut + 1].abs().nan_to_num(nan=float("inf")).max().item())
    if gap <= 1e-5:
        return
    hint = None
    if not bool(out.isfinite().all() and weights.isfinite().all()):
        hint = "the outputs hold NaN or inf"
    elif _parameter_shapes(student, handle, "the module's parameters") == _contract_shapes(D):
        state = student.method(handle, "parameters")  # same weights through known wrong versions: name the mistake
        if type(state) is dict and all(type(state.get(n)) is torch.Tensor for n in LAYOUT_SHAPES):
            hint = _module_hint(out, weights, x, state, H)
            hint = None if hint == MODULE_STEPS else hint
    fail(f"CausalSelfAttention({D}, {H}): the outputs and weights of tokens 0..{cut} "
         f"after changing tokens {cut + 1}..{T - 1}", "unchanged", f"changed by up to {gap:.3g}",
         hint or "query i may attend only keys j <= i, and heads must not mix time steps "
                 f"({SPLIT_NO_TRANSPOSE}; {MERGE_NO_TRANSPOSE})")


@check("split_heads, merge_heads and CausalSelfAttention do not modify their inputs", points=1)
def test_inputs_unchanged(student, gen):
    B, T, H, dh = _head_sizes(gen)
    x, y = torch.randn(B, T, H * dh, generator=gen), torch.randn(B, H, T, dh, generator=gen)
    D = 48
    xm = torch.randn(B, T, D, generator=gen)
    calls = ((f"split_heads(x {tuple(x.shape)}, {H})", "split_heads", (x, H)),
             (f"merge_heads(x {tuple(y.shape)})", "merge_heads", (y,)),
             (f"CausalSelfAttention({D}, {H})(x {tuple(xm.shape)})", None, (xm,)))
    for checked, name, args in calls:
        target = name or student.construct("CausalSelfAttention", D, H)
        _, after = _call_naming_view(student, checked, target, *args, inspect=True)
        expect(type(after) is list and type(after[0]) is torch.Tensor and torch.equal(after[0], args[0]),
               f"the input passed to {checked}, after the call", "unchanged", "changed in place",
               Hint(PURE, "no in-place operations such as x += ..., add_ or masked_fill_ on x"))
