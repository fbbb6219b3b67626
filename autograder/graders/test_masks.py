"""Hidden graders for part `masks`.

One slip in a mask fails several checks, each in its own way: before a failure names its likely
mistake, a diagnosis (`diagnoses`) calls the function once on inputs made to tell the known mistakes
apart, and every failed check of that function names the mistake it recognises.
"""

from __future__ import annotations

import pytest
import torch

import attention_ref as ref
from autograder.engine.kit import (Diagnosis, Hint, as_tensor, check, covering, diagnosed, draw, expect, expect_close,
                                   fail, figures, hint as catalogued, pictures, root_cause, some)

PART = "masks"
ON_DEVICE = catalogued("masks.on_device")
QUERY_KEY = ("query i", "key j")
MAY_ATTEND = ("may attend", "blocked")

# The hints of the catalogue (autograder/hints.py) this part gives most.
ITSELF = catalogued("masks.itself")
OFF_BY_ONE = catalogued("masks.off_by_one")
CONVENTION = catalogued("masks.convention")
TRANSPOSED = catalogued("masks.transposed")
FILL_WHERE_FALSE = catalogued("masks.fill_where_false")
FILL_ZERO = catalogued("masks.fill_zero")
ARITHMETIC = catalogued("masks.arithmetic")
ON_QUERIES = catalogued("masks.on_queries")
TOP_LEFT = catalogued("masks.top_left")
PURE = catalogued("masks.pure")
AVERAGE = catalogued("masks.average")
AND_NOT_OR = catalogued("masks.and_not_or")



def _mask_hint(got: torch.Tensor) -> Hint | None:
    """Name the mistake behind a wrong causal mask by comparing with the usual wrong ones."""
    T_q, T_k = got.shape
    ones = torch.ones(T_q, T_k, dtype=torch.bool)
    known = {
        Hint(ITSELF, "the diagonal is False: tril(-1) or triu(0)"): ones.tril(-1),
        Hint(OFF_BY_ONE, "tril(1) lets query i see key i+1"): ones.tril(1),
        Hint(CONVENTION, "True on the blocked future, as nn.MultiheadAttention's attn_mask: triu(1)"): ones.triu(1),
        Hint(TRANSPOSED, "the mask is transposed: True above the diagonal"):
            torch.ones(T_k, T_q, dtype=torch.bool).tril().T,
        Hint(TOP_LEFT, "aligned bottom-right: query i sees keys up to i + T_k - T_q"): ones.tril(T_k - T_q),
    }
    return next((hint for hint, wrong in known.items() if wrong.shape == got.shape and torch.equal(got.cpu(), wrong)), None)


def _mask_picture(checked: str, got: torch.Tensor, T_q: int, T_k: int | None = None) -> list[dict]:
    """The reference causal mask against the submission's, the differing cells marked."""
    return pictures(lambda: [figures.grid(checked, ref.causal_mask(T_q, T_k), got.cpu(), rows=QUERY_KEY[0],
                                          cols=QUERY_KEY[1], meaning=MAY_ATTEND)])


def _average_hint(got: torch.Tensor) -> Hint:
    got = got.detach().cpu()
    if bool((got == 0).all()):
        return Hint(AVERAGE, "every entry is 0: row i holds 1/(i+1) in columns 0..i")
    if bool((got.diagonal() == 0).any()):
        return Hint(ITSELF, "row i must include column i itself")
    if bool((got.triu(1) != 0).any()):
        return Hint(TRANSPOSED, "the weights lie above the diagonal")
    return Hint(AVERAGE)


# ---------------------------------------------------------------- root causes, probed once per submission


def _average_probe(student) -> Hint | None:
    got = student.call("causal_average", 6)
    if type(got) is not torch.Tensor or tuple(got.shape) != (6, 6) or torch.allclose(
            got.detach().cpu().double(), ref.causal_average(6).double(), atol=1e-6):
        return None
    return _average_hint(got)


def _causal_probe(student) -> Hint | None:
    """The known mistake that causal_mask makes on a square and on two rectangular masks."""
    for T_q, T_k in ((6, 6), (4, 7), (7, 4)):
        got = student.call("causal_mask", T_q, T_k)
        if type(got) is not torch.Tensor or got.dtype != torch.bool or tuple(got.shape) != (T_q, T_k):
            return None
        if not torch.equal(got.cpu(), ref.causal_mask(T_q, T_k)):
            return _mask_hint(got.cpu())
    return None


def _apply_probe(student) -> Hint | None:
    """apply_mask on scores that hold +inf and large values where the mask is False: a fill with 0, arithmetic
    on the booleans and a fill where the mask is True each leave their own trace."""
    scores = torch.tensor([[[[1.5, -2.0, float("inf"), 0.5], [3.0, 40.0, -1.0, 2.0], [0.25, 7.0, -30.0, 1.0]]]])
    mask = torch.tensor([[True, False, False, True], [True, True, False, False], [True, False, True, False]])
    got = student.call("apply_mask", scores.clone(), mask)
    if type(got) is not torch.Tensor or got.shape != scores.shape:
        return None
    got, keep = got.detach().cpu().double(), mask.expand_as(scores)
    scores = scores.double()
    kept = torch.equal(got[keep], scores[keep])
    if kept and bool((got[~keep] == 0).all()):
        return Hint(FILL_ZERO, "the masked scores became 0, which the softmax still weighs")
    if kept and bool(got[~keep].isnan().any()):
        return Hint(ARITHMETIC, "scores * mask makes a masked score 0 (NaN where it is inf), not a block")
    if torch.equal(got, scores + keep):
        return Hint(ARITHMETIC, "scores + mask adds 1 to the allowed scores and blocks nothing")
    if torch.equal(got, scores):
        return Hint(ARITHMETIC, "nothing was blocked")
    if torch.equal(got[~keep], scores[~keep]) and bool((got[keep] < -1e8).all()):
        return Hint(FILL_WHERE_FALSE, "the allowed scores were filled, the masked ones kept")
    return None


def _combine_probe(student) -> Hint | None:
    """combine_masks against the known wrong combinations."""
    causal, padding = ref.causal_mask(5), ref.padding_mask(torch.tensor([5, 3, 1]), 5)
    got = student.call("combine_masks", causal, padding)
    if type(got) is not torch.Tensor or got.dtype != torch.bool:
        return None
    known = {
        Hint(ON_QUERIES, "the padding mask was put on the queries: (B, 1, T, 1)"):
            causal[None, None] & padding[:, None, :, None],
        Hint(CONVENTION, "the padding mask is True on real tokens: do not invert it"):
            causal[None, None] & ~padding[:, None, None, :],
        Hint(AND_NOT_OR): causal[None, None] | padding[:, None, None, :],
    }
    return next((hint for hint, wrong in known.items() if got.shape == wrong.shape and torch.equal(got.cpu(), wrong)),
                None)


def _padding_probe(student) -> Hint | None:
    lengths = torch.tensor([6, 3, 1])
    got = student.call("padding_mask", lengths, 6)
    if type(got) is not torch.Tensor or got.dtype != torch.bool or tuple(got.shape) != (3, 6):
        return None
    positions = torch.arange(6)
    if torch.equal(got.cpu(), positions >= lengths[:, None]):
        return Hint(CONVENTION, "True on the padding, as nn.MultiheadAttention's key_padding_mask")
    if torch.equal(got.cpu(), positions <= lengths[:, None]):
        return Hint(catalogued("masks.padding_off_by_one"))
    return None


@pytest.fixture(scope="module")
def diagnoses(student) -> dict[str, Diagnosis]:
    return {"causal_average": Diagnosis(lambda: _average_probe(student)),
            "causal_mask": Diagnosis(lambda: _causal_probe(student)),
            "padding_mask": Diagnosis(lambda: _padding_probe(student)),
            "apply_mask": Diagnosis(lambda: _apply_probe(student)),
            "combine_masks": Diagnosis(lambda: _combine_probe(student))}


@pytest.fixture(autouse=True)
def _named_once(request, diagnoses):
    """A failed check names the root cause its function's diagnosis finds."""
    with root_cause(*covering(request.function, diagnoses)):
        yield


# ---------------------------------------------------------------- causal_average and causal_mask


@diagnosed("causal_average")
@check("causal_average: row i averages tokens 0..i", points=2)
def test_causal_average_values(student, gen):
    (T,) = draw(gen, 5, 9, 1)
    got = as_tensor(student.call("causal_average", T), f"causal_average({T})", shape=(T, T))
    expect_close(got, ref.causal_average(T), f"causal_average({T})", hint=_average_hint(got), axes=QUERY_KEY)


@diagnosed("causal_average")
@check("causal_average: rows sum to 1, nothing above the diagonal", points=1)
def test_causal_average_properties(student, gen):
    (T,) = draw(gen, 4, 8, 1)
    got = as_tensor(student.call("causal_average", T), f"causal_average({T})", shape=(T, T), dtype=torch.float32)
    sums = got.sum(dim=-1)
    picture = lambda: [figures.grid(f"causal_average({T})", ref.causal_average(T), got,  # noqa: E731
                                    rows=QUERY_KEY[0], cols=QUERY_KEY[1], atol=1e-5, rtol=1e-4)]
    expect(torch.allclose(sums, torch.ones(T), atol=1e-5), f"causal_average({T}).sum(dim=-1)",
           "every row sums to 1", f"row sums {some(sums.tolist())}", _average_hint(got), picture)
    above = got.triu(1)
    expect(bool((above == 0).all()), f"causal_average({T}) above the diagonal", "all 0",
           f"{int((above != 0).sum())} non-zero entries", Hint(TRANSPOSED, "the weights lie above the diagonal"),
           picture)


@diagnosed("causal_mask")
@check("causal_mask: a token may attend to itself", points=1)
def test_causal_mask_diagonal(student, gen):
    (T,) = draw(gen, 4, 9, 1)
    got = as_tensor(student.call("causal_mask", T), f"causal_mask({T})", shape=(T, T), dtype=torch.bool)
    expect(bool(got.diagonal().all()), f"causal_mask({T}).diagonal()", "all True",
           f"{got.diagonal().tolist()}", _mask_hint(got.cpu()) or ITSELF,
           lambda: _mask_picture(f"causal_mask({T})", got, T))


@diagnosed("causal_mask")
@check("causal_mask: no weight above the diagonal", points=1)
def test_causal_mask_future_blocked(student, gen):
    (T,) = draw(gen, 4, 9, 1)
    got = as_tensor(student.call("causal_mask", T), f"causal_mask({T})", shape=(T, T), dtype=torch.bool)
    leaks = got.triu(1)
    if leaks.any():
        i, j = (int(x) for x in leaks.nonzero()[0])
        fail(f"causal_mask({T})[{i}, {j}] (query {i}, key {j} in its future)", "False", "True",
             _mask_hint(got) or "query i may see key j only when j <= i", _mask_picture(f"causal_mask({T})", got, T))


@diagnosed("causal_mask")
@check("causal_mask: values match the reference", points=1)
def test_causal_mask_values(student, gen, device):
    (T,) = draw(gen, 3, 9, 1)
    got = as_tensor(student.call("causal_mask", T, device=device), f"causal_mask({T}, device={device!r})",
                    shape=(T, T), dtype=torch.bool, device=device, device_hint=ON_DEVICE)
    want = ref.causal_mask(T)
    if not torch.equal(got.cpu(), want):
        i, j = (int(x) for x in (got.cpu() != want).nonzero()[0])
        fail(f"causal_mask({T})[{i}, {j}]", str(bool(want[i, j])), str(bool(got[i, j])), _mask_hint(got.cpu()),
             _mask_picture(f"causal_mask({T})", got, T))


@diagnosed("causal_mask")
@check("causal_mask: top-left alignment when T_q != T_k", points=2)
def test_causal_mask_rectangular(student, gen):
    short, long = sorted(draw(gen, 3, 9, 2))
    long += 2
    for T_q, T_k in ((short, long), (long, short)):
        got = as_tensor(student.call("causal_mask", T_q, T_k), f"causal_mask({T_q}, {T_k})",
                        shape=(T_q, T_k), dtype=torch.bool)
        want = ref.causal_mask(T_q, T_k)
        if not torch.equal(got, want):
            i, j = (int(x) for x in (got != want).nonzero()[0])
            fail(f"causal_mask({T_q}, {T_k})[{i}, {j}]", str(bool(want[i, j])), str(bool(got[i, j])),
                 _mask_hint(got) or TOP_LEFT,
                 _mask_picture(f"causal_mask({T_q}, {T_k})", got, T_q, T_k))


@check("causal_mask: created on the requested device", points=1)
def test_causal_mask_device(student, gen, device):
    (T,) = draw(gen, 3, 6, 1)
    as_tensor(student.call("causal_mask", T, T + 1, device=device), f"causal_mask({T}, {T + 1}, device={device!r})",
              shape=(T, T + 1), device=device, device_hint=ON_DEVICE)


def _lengths(gen: torch.Generator, B: int, T: int) -> torch.Tensor:
    lengths = torch.randint(1, T + 1, (B,), generator=gen)
    lengths[0] = T  # one full sequence and at least one padded one
    lengths[1] = max(1, T // 2)
    return lengths


@diagnosed("padding_mask")
@check("padding_mask: True exactly on the real tokens", points=2)
def test_padding_mask_values(student, gen):
    B, T = draw(gen, 2, 5, 1)[0], draw(gen, 5, 9, 1)[0]
    lengths = _lengths(gen, B, T)
    got = student.call("padding_mask", lengths, T)
    positions = torch.arange(T)
    expect_close(got, ref.padding_mask(lengths, T), f"padding_mask(lengths={lengths.tolist()}, T={T})",
                 axes=("sequence b", "position t"), meaning=("a real token", "padding"), candidates={
        Hint(CONVENTION, "True on the padding, as nn.MultiheadAttention's key_padding_mask"):
            positions >= lengths[:, None],
        catalogued("masks.padding_off_by_one"): positions <= lengths[:, None],
    })


@check("padding_mask: result on the device of lengths", points=1)
def test_padding_mask_device(student, gen, device):
    lengths = _lengths(gen, 3, 6).to(device)
    as_tensor(student.call("padding_mask", lengths, 6), f"padding_mask(lengths on {device}, 6)",
              shape=(3, 6), dtype=torch.bool, device=device, device_hint=ON_DEVICE)


def _scores_and_mask(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    B, H = 2, 3
    T_q, T_k = draw(gen, 3, 6, 1)[0], draw(gen, 7, 9, 1)[0]
    scores = torch.randn(B, H, T_q, T_k, generator=gen) * 3
    mask = torch.rand(B, H, T_q, T_k, generator=gen) < 0.6
    mask[..., 0] = True  # every query sees at least one key
    return scores, mask


def _apply_mask_hint(got: torch.Tensor, scores: torch.Tensor, mask: torch.Tensor) -> Hint | None:
    """The mistake these values show, where they tell it (a fill with 0 and scores * mask give the same
    values on finite scores: the diagnosis's probe tells them apart)."""
    if torch.equal(got, scores.masked_fill(~mask, 0.0)):
        return Hint(FILL_ZERO, "the masked scores are 0, which the softmax still weighs")
    if torch.allclose(got, scores) or torch.allclose(got, scores + mask):
        return Hint(ARITHMETIC, "the masked scores are not blocked")
    if torch.equal(got[~mask], scores[~mask]):
        return Hint(FILL_WHERE_FALSE, "the allowed scores were filled, the masked ones kept")
    return None


@diagnosed("apply_mask")
@check("apply_mask: masked entries get weight 0, the others keep their scores", points=2)
def test_apply_mask_values(student, gen, device):
    scores, mask = _scores_and_mask(gen)
    checked = f"apply_mask(scores {tuple(scores.shape)}, mask)"
    got = as_tensor(student.call("apply_mask", scores.to(device), mask.to(device)), checked,
                    shape=tuple(scores.shape), device=device).cpu()
    weights = torch.softmax(got.double(), dim=-1)
    leaked = weights[~mask]
    if not bool((leaked == 0).all()) or not torch.equal(got[mask], scores[mask]):
        wrong_weight = float(leaked.abs().max()) if leaked.numel() else 0.0
        changed = int((got[mask] != scores[mask]).sum())
        fail(checked, "softmax weight exactly 0 where the mask is False, scores unchanged where it is True",
             f"largest weight on a masked entry {wrong_weight:.3g}; {changed} allowed scores changed",
             _apply_mask_hint(got, scores, mask), pictures(lambda: [figures.grid(
                 f"softmax of {checked}", torch.softmax(ref.apply_mask(scores, mask).double(), -1), weights,
                 rows=QUERY_KEY[0], cols=QUERY_KEY[1], atol=1e-6)]))


@diagnosed("apply_mask")
@check("apply_mask: broadcasts a causal (T_q, T_k) mask over batch and heads (T_q < T_k and T_q > T_k)", points=1)
def test_apply_mask_broadcast(student, gen):
    wide, _ = _scores_and_mask(gen)
    for scores in (wide, wide.transpose(-2, -1).contiguous()):
        mask = ref.causal_mask(scores.shape[-2], scores.shape[-1])
        checked = f"apply_mask(scores {tuple(scores.shape)}, causal_mask{tuple(mask.shape)})"
        got = as_tensor(student.call("apply_mask", scores, mask), checked, shape=tuple(scores.shape))
        expect_close(torch.softmax(got.double(), -1), torch.softmax(ref.apply_mask(scores, mask).double(), -1),
                     f"softmax of {checked}", hint=_apply_mask_hint(got, scores, mask.expand_as(scores)),
                     axes=QUERY_KEY)


@check("apply_mask: does not modify its inputs", points=1)
def test_apply_mask_pure(student, gen):
    scores, mask = _scores_and_mask(gen)
    _, (scores_after, mask_after) = student.call_and_inspect("apply_mask", scores, mask)
    expect(type(scores_after) is torch.Tensor and torch.equal(scores_after, scores) and torch.equal(mask_after, mask),
           "the scores passed to apply_mask, after the call", "unchanged", "changed in place",
           Hint(PURE, "use masked_fill, not masked_fill_"))


@check("combine_masks: shape (B, 1, T, T) and boolean", points=1)
def test_combine_masks_shape(student, gen):
    B, T = 3, draw(gen, 4, 8, 1)[0]
    got = student.call("combine_masks", ref.causal_mask(T), ref.padding_mask(_lengths(gen, B, T), T))
    as_tensor(got, f"combine_masks(causal ({T}, {T}), padding ({B}, {T}))", shape=(B, 1, T, T), dtype=torch.bool)


@diagnosed("combine_masks")
@check("combine_masks: a key is allowed only if both masks allow it", points=2)
def test_combine_masks_values(student, gen, device):
    B, T = 3, draw(gen, 4, 8, 1)[0]
    causal, padding = ref.causal_mask(T), ref.padding_mask(_lengths(gen, B, T), T)
    got = student.call("combine_masks", causal.to(device), padding.to(device))
    checked = f"combine_masks(causal ({T}, {T}), padding ({B}, {T}))"
    as_tensor(got, checked, shape=(B, 1, T, T), dtype=torch.bool, device=device, device_hint=ON_DEVICE)
    expect_close(got, ref.combine_masks(causal, padding), checked, device=device, axes=QUERY_KEY, meaning=MAY_ATTEND,
                 candidates={
        Hint(ON_QUERIES, "the padding mask was put on the queries: (B, 1, T, 1)"):
            causal[None, None] & padding[:, None, :, None],
        Hint(AND_NOT_OR):
            causal[None, None] | padding[:, None, None, :],
        Hint(CONVENTION, "the padding mask is True on real tokens: do not invert it"):
            causal[None, None] & ~padding[:, None, None, :],
    })


@diagnosed("combine_masks")
@check("combine_masks: changing padded keys and values leaves real outputs unchanged", points=1)
def test_combine_masks_padding_invariance(student, gen):
    B, T, d = 3, draw(gen, 5, 8, 1)[0], 4
    lengths = _lengths(gen, B, T)
    padding = ref.padding_mask(lengths, T)
    mask = as_tensor(student.call("combine_masks", ref.causal_mask(T), padding), "combine_masks(...)",
                     shape=(B, 1, T, T), dtype=torch.bool)
    q, k, v = (torch.randn(B, 1, T, d, generator=gen) for _ in range(3))
    noise = torch.randn(B, 1, T, d, generator=gen) * 10 * (~padding)[:, None, :, None]
    real = padding[:, None, :, None].expand(B, 1, T, d)
    out, _ = ref.scaled_dot_product_attention(q, k, v, mask)
    out_changed, _ = ref.scaled_dot_product_attention(q, k + noise, v + noise, mask)
    gap = (out - out_changed)[real].abs().nan_to_num(nan=float("inf")).max().item()
    expect(gap < 1e-5, "attention outputs of real tokens after changing the padded keys and values",
           "unchanged", f"changed by up to {gap:.3g}", ON_QUERIES)
