"""Hidden graders for part `positions`.

A wrong encoding fails most checks of sinusoidal_encoding, each seeing one aspect of it (the first
row, a frequency, the base): its diagnosis matches one small encoding against the known formulas
first, and every failed check of the encoding names the formula it follows.
"""

from __future__ import annotations

import math
from typing import Callable

import pytest
import torch

import attention_ref as ref
from autograder.engine.kit import (Diagnosis, Hint, StudentError, as_tensor, check, covering, diagnosed, draw, expect,
                                   expect_close, fail, figures, hint as catalogued, pictures, root_cause, some,
                                   tolerance, unravel)

PART = "positions"

# A float32 encoding computed the usual way (angles p * exp(-2i ln(base) / d) in float32) is
# off by up to 3.4e-4 at positions 2048..4096 (measured for d_model <= 128), because a float32
# angle near 4000 is only known to half an ulp of 4.9e-4. Float16 or bfloat16 angles are off
# by up to 2 there. 2e-3 passes every float32 form with a margin of about 6 and fails those by ~1000.
LARGE_POSITION_ATOL = 2e-3
# Telling formulas apart (which one a submission follows) needs no precision: float16 angles are
# within 6e-3 for T <= 16 and 1.3e-2 for T <= 32, while the known formulas differ by 0.1 or more.
FORMULA_ATOL = 2e-2
# The frequency of a sin/cos pair, as read off the submission's columns: relative error allowed.
FREQUENCY_RTOL = 1e-2

ANGLES_IN_FLOAT = catalogued("positions.angles_in_float")
PRECISION = Hint(ANGLES_IN_FLOAT, "float16 or integer arithmetic loses digits as positions grow")
INTERLEAVES = catalogued("positions.interleaves")
PAIRS = catalogued("positions.pairs")
EXPONENT = catalogued("positions.exponent")
IGNORED_BASE = "use the base argument: the frequencies are 1 / base^(2i/d_model), not 1 / 10000^(2i/d_model)"
NOT_BOOL = "return a Python bool (bool(...) or torch.allclose give one)"
POSITION_FEATURE = ("position p", "feature")
POSITION_POSITION = ("position p", "position q")



def _even(gen: torch.Generator, low: int, high: int) -> int:
    return 2 * draw(gen, low // 2, high // 2, 1)[0]


# ---------------------------------------------------------------- known formulas (float64)

def _interleave(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    return torch.stack([first, second], dim=-1).flatten(-2)


def _angles(T: int, d: int, base: float, *, exponent: torch.Tensor | None = None, start: int = 0) -> torch.Tensor:
    pairs = torch.arange(d // 2, dtype=torch.float64)
    exponent = 2 * pairs / d if exponent is None else exponent
    return torch.arange(start, start + T, dtype=torch.float64)[:, None] / base**exponent


def _contract(T: int, d: int, base: float) -> torch.Tensor:
    a = _angles(T, d, base)
    return _interleave(a.sin(), a.cos())


def _column_exponent(T: int, d: int, base: float) -> torch.Tensor:
    a = torch.arange(T, dtype=torch.float64)[:, None] / base ** (torch.arange(d, dtype=torch.float64) / d)
    return torch.where(torch.arange(d) % 2 == 0, a.sin(), a.cos())


def _half_dim_minus_1(T: int, d: int, base: float) -> torch.Tensor | None:
    if d < 4:
        return None
    a = _angles(T, d, base, exponent=torch.arange(d // 2, dtype=torch.float64) / (d // 2 - 1))
    return _interleave(a.sin(), a.cos())


def _whisper(T: int, d: int, base: float) -> torch.Tensor | None:
    """Whisper's sinusoids(): [sin | cos] halves with the (half_dim - 1) denominator."""
    if d < 4:
        return None
    a = _angles(T, d, base, exponent=torch.arange(d // 2, dtype=torch.float64) / (d // 2 - 1))
    return torch.cat([a.sin(), a.cos()], dim=-1)


Formula = Callable[[int, int, float], "torch.Tensor | None"]

# Each likely mistake and what it would return; the hints are the catalogue's (autograder/hints.py).
WRONG_FORMULAS: dict[Hint, Formula] = {
    Hint(catalogued("positions.sin_even"), "PE[p, 2i] = sin, PE[p, 2i+1] = cos"):
        lambda T, d, b: _interleave(_angles(T, d, b).cos(), _angles(T, d, b).sin()),
    Hint(INTERLEAVES, "sin and cos of one frequency side by side in columns 2i, 2i+1, not in two halves"):
        lambda T, d, b: torch.cat([_angles(T, d, b).sin(), _angles(T, d, b).cos()], dim=-1),
    Hint(INTERLEAVES, "this is Whisper's [sin | cos] halves; its frequencies, exp(-ln(base) · i / (d_model/2 - 1)), "
                      "are not 1 / base^(2i/d_model) either"): _whisper,
    Hint(PAIRS, "pair i uses the exponent 2i/d_model, not i/d_model"):
        lambda T, d, b: (lambda a: _interleave(a.sin(), a.cos()))(
            _angles(T, d, b, exponent=torch.arange(d // 2, dtype=torch.float64) / d)),
    Hint(PAIRS, "columns 2i and 2i+1 share one angle, p / base^(2i/d_model)"): _column_exponent,
    Hint(EXPONENT, "frequencies 1 / base^(2i/d) with d = d_model, not exp(-ln(base) · i / (d_model/2 - 1))"):
        _half_dim_minus_1,
    Hint(catalogued("positions.from_zero"), "row p is position p, so PE[0] = [0, 1, 0, 1, ...]"):
        lambda T, d, b: (lambda a: _interleave(a.sin(), a.cos()))(_angles(T, d, b, start=1)),
    Hint(ANGLES_IN_FLOAT, "integer division 2*i // d_model makes every exponent 0"):
        lambda T, d, b: (lambda a: _interleave(a.sin(), a.cos()))(_angles(T, d, b, exponent=torch.zeros(d // 2))),
}


def _matches(got: torch.Tensor, want: torch.Tensor | None, atol: float) -> bool:
    return want is not None and want.shape == got.shape and torch.allclose(got, want, atol=atol, rtol=0.0)


def _formula_of(got: torch.Tensor, T: int, d: int, base: float) -> tuple[Hint | None, Formula] | None:
    """(None for the contract or the mistake, formula) that `got`'s values follow, precision aside."""
    got = got.detach().to("cpu", torch.float64)
    for hint, formula in ((None, _contract), *WRONG_FORMULAS.items()):
        if _matches(got, formula(T, d, base), FORMULA_ATOL):
            return hint, formula
    return None


def _diagnose(got: torch.Tensor, T: int, d: int, base: float = 10000.0) -> Hint | None:
    """The likely mistake behind a wrong encoding of positions 0..T-1."""
    got = got.detach().to("cpu", torch.float64)
    found = _formula_of(got, T, d, base)
    if found is not None:
        return found[0] or PRECISION  # the contract's formula, only less precise
    want, angles = _contract(T, d, base), _angles(T, d, base).repeat_interleave(2, dim=-1)
    small = angles < 1  # where precision cannot matter: right there, wrong further on
    if got.shape == want.shape and bool(((got - want)[small].abs() < 2e-3).all()):
        return PRECISION
    return None


def _encoding_probe(student) -> Hint | None:
    """The known formula a small encoding follows (positions 0..23, d_model = 12), if it is not the contract's."""
    T, d = 24, 12
    got = student.call("sinusoidal_encoding", T, d)
    if type(got) is not torch.Tensor or tuple(got.shape) != (T, d):
        return None
    got = got.detach().to("cpu", torch.float64)
    if torch.allclose(got, _contract(T, d, 10000.0), atol=1e-4, rtol=0.0):
        return None
    return _diagnose(got, T, d)


@pytest.fixture(scope="module")
def diagnoses(student) -> dict[str, Diagnosis]:
    return {"sinusoidal_encoding": Diagnosis(lambda: _encoding_probe(student))}


@pytest.fixture(autouse=True)
def _named_once(request, diagnoses):
    """A failed check names the root cause its function's diagnosis finds."""
    with root_cause(*covering(request.function, diagnoses)):
        yield


def _encoding(student, T: int, d: int, **kwargs) -> torch.Tensor:
    label = ", ".join([str(T), str(d)] + [f"{k}={v}" for k, v in kwargs.items()])
    got = as_tensor(student.call("sinusoidal_encoding", T, d, **kwargs), f"sinusoidal_encoding({label})", shape=(T, d))
    return got.detach().to("cpu", torch.float64)


# ---------------------------------------------------------------- sinusoidal_encoding

@check("sinusoidal_encoding: shape (T, d_model), float32", points=1)
def test_encoding_shape_dtype(student, gen):
    T, d = draw(gen, 5, 30, 1)[0], _even(gen, 8, 40)
    T += T == d
    as_tensor(student.call("sinusoidal_encoding", T, d), f"sinusoidal_encoding({T}, {d})",
              shape=(T, d), dtype=torch.float32)


@diagnosed("sinusoidal_encoding")
@check("sinusoidal_encoding: values match the reference", points=1)
def test_encoding_values(student, gen):
    d_long, d_wide = _even(gen, 8, 20), _even(gen, 32, 48)
    T_long, T_wide = draw(gen, 24, 40, 1)[0], draw(gen, 10, 20, 1)[0]
    for T, d in ((T_long, d_long), (T_wide, d_wide)):  # T > d, then T < d
        got = _encoding(student, T, d)
        expect_close(got, ref.sinusoidal_encoding(T, d), f"sinusoidal_encoding({T}, {d})", hint=_diagnose(got, T, d),
                     axes=POSITION_FEATURE)


@diagnosed("sinusoidal_encoding")
@check("sinusoidal_encoding: PE[0] = [0, 1, 0, 1, ...] (sin 0, cos 0 pairs)", points=1)
def test_encoding_first_row(student, gen):
    T, d = draw(gen, 3, 6, 1)[0], _even(gen, 8, 24)
    got = _encoding(student, T, d)
    want = torch.tensor([0.0, 1.0] * (d // 2))
    expect_close(got[0], want, f"sinusoidal_encoding({T}, {d})[0]",
                 hint=_diagnose(got, T, d) or "PE[0, 2i] = sin 0 = 0, PE[0, 2i+1] = cos 0 = 1")


def _pair_frequency(got: torch.Tensor, i: int) -> tuple[float, float]:
    """(mean, spread) of the angle by which pair i turns from one position to the next.

    The columns of pair i are found in the layout PE[0] shows (interleaved, swapped or
    halves: those mistakes are the first-row check's), and the angle is read relative
    to the previous row, so positions starting at 1 do not matter here either.
    """
    d, half = got.shape[1], got.shape[1] // 2
    first = got[0]
    if torch.allclose(first, torch.tensor([1.0, 0.0] * half, dtype=first.dtype), atol=1e-3):
        s, c = got[:, 2 * i + 1], got[:, 2 * i]
    elif d > 2 and torch.allclose(first, torch.tensor([0.0] * half + [1.0] * half, dtype=first.dtype), atol=1e-3):
        s, c = got[:, i], got[:, half + i]
    else:
        s, c = got[:, 2 * i], got[:, 2 * i + 1]
    steps = torch.remainder(torch.diff(torch.atan2(s, c)) + math.pi, 2 * math.pi) - math.pi
    if not bool(torch.isfinite(steps).all()):
        return float("nan"), float("nan")
    mean = float(steps.mean())
    return mean, float((steps - mean).abs().max())


def _expect_pair_frequency(got: torch.Tensor, T: int, d: int, i: int, fallback: Hint) -> None:
    want = 10000.0 ** (-2 * i / d)
    mean, spread = _pair_frequency(got, i)
    ok = abs(mean - want) <= FREQUENCY_RTOL * want and spread <= 1e-2 + FREQUENCY_RTOL * want
    expect(ok, f"sinusoidal_encoding({T}, {d}), pair i={i} (sin in column {2 * i}, cos in column {2 * i + 1})",
           f"the angle grows by 1 / 10000^({2 * i}/{d}) = {want:.6g} rad per position",
           f"{mean:.6g} rad per position on average" + (f", varying by up to {spread:.3g}" if spread > 1e-3 else ""),
           _diagnose(got, T, d) or (fallback if math.isfinite(mean) else None),
           lambda: [figures.grid(f"sinusoidal_encoding({T}, {d})", _contract(T, d, 10000.0), got,
                                 rows=POSITION_FEATURE[0], cols=POSITION_FEATURE[1], atol=1e-4)])


@diagnosed("sinusoidal_encoding")
@check("sinusoidal_encoding: frequencies go by pairs (columns 2 and 3 share 1 / base^(2/d))", points=1)
def test_encoding_second_pair(student, gen):
    T, d = draw(gen, 12, 20, 1)[0], _even(gen, 8, 16)
    _expect_pair_frequency(_encoding(student, T, d), T, d, 1, Hint(PAIRS, "pair i uses p / base^(2i/d_model)"))


@diagnosed("sinusoidal_encoding")
@check("sinusoidal_encoding: last frequency is 1 / base^((d-2)/d)", points=1)
def test_encoding_last_pair(student, gen):
    T, d = draw(gen, 12, 20, 1)[0], _even(gen, 8, 32)
    _expect_pair_frequency(_encoding(student, T, d), T, d, d // 2 - 1, Hint(EXPONENT, "pair i = d_model/2 - 1 is the last"))


@diagnosed("sinusoidal_encoding")
@check("sinusoidal_encoding: accurate at large positions (2048 and beyond)", points=1)
def test_encoding_large_positions(student, gen):
    T, d = draw(gen, 3000, 4096, 1)[0], _even(gen, 8, 32)
    got = _encoding(student, T, d)
    rows = torch.cat([torch.randint(2048, T - 1, (7,), generator=gen), torch.tensor([T - 1])]).unique()
    found = _formula_of(got[:32], 32, d, 10000.0)
    hint, formula = found if found is not None else (None, _contract)
    want = formula(T, d, 10000.0)[rows]  # the formula the small positions follow, computed in float64
    gap = (got[rows] - want).abs().nan_to_num(nan=float("inf"))
    r, c = unravel(int(gap.argmax()), tuple(gap.shape))
    expected = "the float64 values of the formula your first positions follow" if hint else "the reference values"
    expect(float(gap.max()) <= LARGE_POSITION_ATOL, f"sinusoidal_encoding({T}, {d}) at positions {rows.tolist()}",
           f"{expected} within {LARGE_POSITION_ATOL:g}, e.g. PE[{int(rows[r])}, {c}] = {float(want[r, c]):.6g}",
           f"{float(got[rows][r, c]):.6g} there (largest gap {float(gap.max()):.3g})",
           PRECISION if found is not None else _diagnose(got[:32], 32, d))


@diagnosed("sinusoidal_encoding")
@check("sinusoidal_encoding: uses its base argument", points=1)
def test_encoding_base(student, gen):
    T, d = draw(gen, 12, 16, 1)[0], _even(gen, 8, 16)
    base = float(50 * draw(gen, 2, 20, 1)[0])
    default, got = _encoding(student, T, d), _encoding(student, T, d, base=base)
    found = _formula_of(default, T, d, 10000.0)
    hint, formula = found if found is not None else (None, _contract)
    want = formula(T, d, base)
    if not _matches(got, want, FORMULA_ATOL):
        if _matches(got, default, 1e-6):
            hint = IGNORED_BASE
        elif found is None:
            hint = _diagnose(got, T, d, base)
        expected = "the formula of your default encoding with this base" if found and found[0] else "the reference"
        gap = (got - want).abs().nan_to_num(nan=float("inf"))
        r, c = unravel(int(gap.argmax()), tuple(gap.shape))
        fail(f"sinusoidal_encoding({T}, {d}, base={base:g})", f"{expected}: PE[{r}, {c}] = {float(want[r, c]):.6g}",
             f"{float(got[r, c]):.6g} there (largest gap {float(gap.max()):.3g})", hint,
             pictures(lambda: [figures.grid(f"sinusoidal_encoding({T}, {d}, base={base:g})", want, got,
                                            rows=POSITION_FEATURE[0], cols=POSITION_FEATURE[1], atol=FORMULA_ATOL)]))


@check("sinusoidal_encoding: odd d_model raises ValueError", points=1)
def test_encoding_odd_d_model(student, gen):
    T, d = draw(gen, 3, 9, 1)[0], 2 * draw(gen, 2, 8, 1)[0] + 1
    try:
        got = student.call("sinusoidal_encoding", T, d)
    except StudentError as error:
        if error.kind != "exception":
            raise  # not implemented, missing, a timeout: the plugin says so
        if error.type == "ValueError":
            return
        fail(f"sinusoidal_encoding({T}, {d}) with odd d_model", "ValueError naming the problem",
             f"{error.type}: {error.message[:120]}", "check d_model % 2 first and raise ValueError")
    shape = tuple(got.shape) if type(got) is torch.Tensor else None
    fail(f"sinusoidal_encoding({T}, {d}) with odd d_model", "ValueError (sin/cos come in pairs)",
         f"a result{f' of shape {shape}' if shape else ''}, no error", "check d_model % 2 first and raise ValueError")


# ---------------------------------------------------------------- position_similarity

COSINE = catalogued("positions.cosine")
SIMILARITY_HINT = Hint(COSINE, "divide each position's vector by its norm")


def _positions(gen: torch.Generator) -> torch.Tensor:
    T, d = draw(gen, 5, 9, 1)[0], draw(gen, 10, 16, 1)[0]
    return torch.randn(T, d, generator=gen) * (0.5 + 3 * torch.rand(T, 1, generator=gen))  # rows of unequal length


@check("position_similarity: cosine similarity of every pair, as the reference", points=1)
def test_similarity_values(student, gen, device):
    pe = _positions(gen)
    T, d = pe.shape
    checked = f"position_similarity(pe of shape {(T, d)})"
    got = as_tensor(student.call("position_similarity", pe.to(device)), checked, shape=(T, T), device=device)
    dots = pe @ pe.T
    expect_close(got, ref.position_similarity(pe), checked, device=device, axes=POSITION_POSITION, candidates={
        Hint(COSINE, "divide each position's vector by its norm: this is the raw dot product"): dots,
        Hint(COSINE, "divide each position's vector by its norm, not by d"): dots / d,
        "normalise each position (a row, dim=-1), not each feature column": (lambda u: u @ u.T)(pe / pe.norm(dim=0)),
    })


@check("position_similarity: every position has similarity 1 with itself", points=1)
def test_similarity_diagonal(student, gen):
    pe = _positions(gen)
    T = pe.shape[0]
    got = as_tensor(student.call("position_similarity", pe), f"position_similarity(pe of shape {tuple(pe.shape)})",
                    shape=(T, T))
    diagonal = got.detach().double().diagonal()
    expect(bool(((diagonal - 1).abs() <= 1e-5).all()), f"position_similarity(pe of shape {tuple(pe.shape)}).diagonal()",
           "all 1", some(diagonal.tolist()), SIMILARITY_HINT,
           lambda: [figures.grid(f"position_similarity(pe of shape {tuple(pe.shape)})", ref.position_similarity(pe),
                                 got, rows=POSITION_POSITION[0], cols=POSITION_POSITION[1], atol=1e-5, rtol=1e-4)])


@check("position_similarity: the lesson's figures for position 10 of a 64 x 64 encoding", points=1)
def test_similarity_lesson_figures(student, gen):
    pe = ref.sinusoidal_encoding(64, 64)
    got = as_tensor(student.call("position_similarity", pe), "position_similarity(sinusoidal_encoding(64, 64))",
                    shape=(64, 64))
    others = [10, 11, 15, 30, 60]
    want = ref.position_similarity(pe)[10, others]
    row = got.detach().double()[10, others]
    expect(torch.allclose(row, want.double(), atol=1e-4, rtol=0.0),
           f"position_similarity(sinusoidal_encoding(64, 64))[10, {others}]",
           f"{[round(x, 3) for x in want.tolist()]} (the lesson: 1.0, 0.966, 0.734, 0.59, 0.49)",
           f"{[round(x, 3) for x in row.tolist()]}", SIMILARITY_HINT,
           lambda: [figures.grid("position_similarity(sinusoidal_encoding(64, 64))", ref.position_similarity(pe), got,
                                 rows=POSITION_POSITION[0], cols=POSITION_POSITION[1], atol=1e-4)])


# ---------------------------------------------------------------- add_positions

def _own_encoding(student, T: int, D: int) -> torch.Tensor | None:
    """The submission's own encoding, so a wrong one costs points in its own checks only."""
    try:
        own = student.call("sinusoidal_encoding", T, D)
    except StudentError:
        return None
    return own.detach().cpu() if type(own) is torch.Tensor and tuple(own.shape) == (T, D) else None


def _add_positions_hint(got: torch.Tensor, x: torch.Tensor) -> str:
    added = got.detach().to("cpu", torch.float64) - x.double()
    _, T, D = x.shape
    if torch.allclose(added, torch.zeros_like(added), atol=1e-6):
        return "add the encoding: x + sinusoidal_encoding(T, D)"
    return _diagnose(added[0], T, D) or "return x + sinusoidal_encoding(T, D), with T and D from x's shape (B, T, D)"


@check("add_positions: x + sinusoidal_encoding(T, D), on x's device", points=1)
def test_add_positions_values(student, gen, device):
    B, T, D = 2, draw(gen, 5, 12, 1)[0], _even(gen, 14, 24)
    x = torch.randn(B, T, D, generator=gen)
    checked = f"add_positions(x of shape {(B, T, D)})"
    got = as_tensor(student.call("add_positions", x.to(device)), checked, shape=(B, T, D), device=device)
    atol, rtol = tolerance(device)
    own = _own_encoding(student, T, D)
    if own is not None and torch.allclose(got.detach().to("cpu", torch.float64), (x + own).double(), atol=atol, rtol=rtol):
        return  # adds the submission's own encoding: right here, its mistakes are graded above
    expect_close(got, x + ref.sinusoidal_encoding(T, D), checked, device=device, hint=_add_positions_hint(got, x),
                 axes=POSITION_FEATURE)


@check("add_positions: keeps x's dtype (float32 stays float32, float64 stays float64) and does not modify x", points=1)
def test_add_positions_dtype_and_purity(student, gen, device):
    B, T, D = 2, draw(gen, 5, 12, 1)[0], _even(gen, 14, 24)
    for dtype in (torch.float32, torch.float64):
        x = torch.randn(B, T, D, generator=gen, dtype=dtype)
        checked = f"add_positions(x of shape {(B, T, D)}, {str(dtype).removeprefix('torch.')})"
        got, (x_after,) = student.call_and_inspect("add_positions", x.to(device))
        as_tensor(got, checked, shape=(B, T, D), device=device)
        expect(got.dtype == dtype, f"{checked}.dtype", str(dtype), str(got.dtype),
               "convert the encoding to x's dtype: .to(device=x.device, dtype=x.dtype)")
        expect(type(x_after) is torch.Tensor and torch.equal(x_after.cpu(), x), "the x passed to add_positions, after the call",
               "unchanged", "changed in place", "don't modify inputs: return x + pe (not x += pe)")


# ---------------------------------------------------------------- is_permutation_equivariant

def _shuffle(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokens x (B, T, D) with B < T != D, and a permutation that is neither the identity nor its own inverse."""
    B, T, D = 2, draw(gen, 5, 8, 1)[0], draw(gen, 9, 12, 1)[0]
    x = torch.randn(B, T, D, generator=gen)
    perm = torch.randperm(T, generator=gen)
    while torch.equal(perm[perm], torch.arange(T)):
        perm = torch.randperm(T, generator=gen)
    return x, perm


def _equivariance_hint(expected: bool) -> str:
    if expected:
        return "shuffle the output too: compare fn(x[:, perm]) with fn(x)[:, perm] (tokens are dim 1)"
    return "compare fn(x[:, perm]) with fn(x)[:, perm], within atol: order-dependent functions must give False"


# What the grader hands over, and the right answer for each (the submission sees neutral handles only).
EQUIVARIANT = {"self_attention": True, "causal_self_attention": False, "doubled": True, "running_sum": False}
LABELS = {"self_attention": "self-attention", "causal_self_attention": "causal self-attention",
          "doubled": "a token-wise function", "running_sum": "a running sum"}


def _expect_equivariance(student, served, gen, device: str, names: tuple[str, ...]) -> None:
    """is_permutation_equivariant on functions the grader serves, one equivariant and one not, in an
    order drawn per student: no constant answer passes. Where False is right, a 0-d boolean tensor is
    taken as its bool (the type is checked where True is right)."""
    x, perm = _shuffle(gen)
    order = list(names) if torch.rand(1, generator=gen).item() < 0.5 else list(reversed(names))
    for name in order:
        expected = EQUIVARIANT[name]
        got = student.call("is_permutation_equivariant", served(name), x.to(device), perm.to(device))
        checked = f"is_permutation_equivariant({LABELS[name]}, x of shape {tuple(x.shape)}, perm={perm.tolist()})"
        if not expected and type(got) is torch.Tensor and got.numel() == 1 and got.dtype == torch.bool:
            got = bool(got.item())
        expect(type(got) is bool, checked, "a bool", type(got).__name__, NOT_BOOL)
        expect(got is expected, checked, str(expected), str(got), _equivariance_hint(expected))


@check("is_permutation_equivariant: tells self-attention (True, a bool) from causal self-attention (False)", points=1)
def test_equivariant_attention(student, served, gen, device):
    _expect_equivariance(student, served, gen, device, ("self_attention", "causal_self_attention"))


@check("is_permutation_equivariant: tells a token-wise function (True) from a running sum (False)", points=1)
def test_equivariant_tokenwise(student, served, gen, device):
    _expect_equivariance(student, served, gen, device, ("doubled", "running_sum"))
