"""Hidden graders for part `tiles`.

States, merges and tiled attention are compared with the reference on inputs drawn per student.
A known mistake is named by what it would have returned: the reference's own pieces with one of
them swapped for the mistaken version (a merge that forgets to rescale, a block skipped too early,
the last short block dropped ...). Two checks look past the values: tiled attention at a length
whose T × T grid does not fit the memory that call is allowed, and the causal version's time
against the full one's, both by what the grader itself observes.

A slip in block_state or merge_states also fails tiled attention, which is built of them: when a
check fails, diagnoses call each of the three on small inputs made to tell the known mistakes apart
(the state of a block with an empty row, merges either way round, with an empty state and of states
that keep a log in l's place, tiled attention with a short last block and causally with T_q < T_k),
and every failed check they cover names the mistake found in the first piece that has one, also where
tiled attention raised; running out of memory is noted by the check that sees it.
"""

from __future__ import annotations

import math
import statistics
import time
from functools import reduce
from typing import Any, Callable

import pytest
import torch

import attention_ref as ref
from autograder.engine.kit import (Diagnosis, EXCEPTION, Hint, StudentError, as_number, as_tensor, byte_size, check,
                                   covering, describe, diagnosed, draw, expect, expect_close, fail, hint as catalogued,
                                   root_cause, tolerance)

PART = "tiles"

State = tuple[torch.Tensor, torch.Tensor, torch.Tensor]

# The hints of the catalogue (autograder/hints.py) this part gives most.
RESCALE = catalogued("tiles.rescale")
RUNNING_MAX = catalogued("tiles.running_max")
EMPTY = catalogued("tiles.empty")
NORMALISED = catalogued("tiles.normalised")
SKIP = catalogued("tiles.skip")
LAST_BLOCK = catalogued("tiles.last_block")
SCALE = catalogued("scaling.no_scale")
WHOLE_GRID = catalogued("tiles.whole_grid")
TOP_LEFT = catalogued("masks.top_left")  # the masks table's hint: the same slip
KEY_COUNT = catalogued("tiles.key_count")
LOG_SUM = catalogued("tiles.log_sum")

QUERY_FEATURE = ("query i", "feature")
SCALE_MISTAKES: dict[Hint, Callable[[torch.Tensor, torch.Tensor], float]] = {
    Hint(SCALE, "d is the last dimension of q, not the number of keys in the block"): lambda q, k: k.shape[-2],
    Hint(SCALE, "not by √T, the number of queries"): lambda q, k: q.shape[-2],
    Hint(SCALE, "the scores are not scaled at all"): lambda q, k: 1.0,
}


# ---------------------------------------------------------------- inputs

def _sizes(gen: torch.Generator) -> tuple[int, int, int, int]:
    """T_q, T_k, d, d_v all different, and d larger than any sequence length a check uses, so that no
    axis can stand in for another (a scale by √T is then never a scale by √d)."""
    T_q, T_k = draw(gen, 5, 9)[0], draw(gen, 13, 21)[0]
    d, d_v = draw(gen, 30, 34)[0], draw(gen, 3, 7)[0]
    return T_q, T_k, d, d_v


def _qkv(gen: torch.Generator, T_q: int, T_k: int, d: int, d_v: int, dtype: torch.dtype = torch.float32,
         lead: tuple[int, ...] = (2, 3)) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return tuple(torch.randn(*lead, T, width, generator=gen, dtype=torch.float64).to(dtype)
                 for T, width in ((T_q, d), (T_k, d), (T_k, d_v)))


def _lifted(q: torch.Tensor, k: torch.Tensor, blocks: list[tuple[int, int]], shifts: list[float]
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """q and k with feature 0 set so that the scores of keys a..b-1 rise by `shift`, block by block."""
    q, k = q.clone(), k.clone()
    d = q.shape[-1]
    q[..., 0] = math.sqrt(math.sqrt(d))
    for (a, b), shift in zip(blocks, shifts):
        k[..., a:b, 0] = shift * math.sqrt(math.sqrt(d))
    return q, k


def _empty_like(state: State) -> State:
    m, l, o = state
    return torch.full_like(m, float("-inf")), torch.zeros_like(l), torch.zeros_like(o)


# ---------------------------------------------------------------- what the mistakes compute

def _safe(m: torch.Tensor) -> torch.Tensor:
    return torch.where(torch.isfinite(m), m, torch.zeros_like(m))


def _divide(total: torch.Tensor, l: torch.Tensor) -> torch.Tensor:
    return total / torch.where(l > 0, l, torch.ones_like(l))[..., None]


def _merge_rescaling(a: State, b: State, *, rescale_a: bool = True, rescale_b: bool = True,
                     weigh_by_sums: bool = True, max_of: str = "both") -> State:
    """merge_states with the usual slips as switches: a side not rescaled to the common max, outputs
    weighted by exp(m - m_new) alone (as if they were unnormalised sums), or one side's max kept."""
    (m_a, l_a, o_a), (m_b, l_b, o_b) = a, b
    m = {"both": torch.maximum(m_a, m_b), "a": m_a, "b": m_b}[max_of]
    e_a = torch.exp(m_a - _safe(m)) if rescale_a else torch.ones_like(m_a)
    e_b = torch.exp(m_b - _safe(m)) if rescale_b else torch.ones_like(m_b)
    l = l_a * e_a + l_b * e_b
    w_a, w_b = (l_a * e_a, l_b * e_b) if weigh_by_sums else (e_a, e_b)
    return m, l, _divide(w_a[..., None] * o_a + w_b[..., None] * o_b, l)


MERGE_MISTAKES: dict[Hint, Callable[[State, State], State]] = {
    Hint(RESCALE): lambda a, b: _merge_rescaling(a, b, rescale_a=False),
    Hint(RESCALE, "for both sides: each is scaled to its own max"): lambda a, b: _merge_rescaling(
        a, b, rescale_a=False, rescale_b=False),
    Hint(RESCALE, "the new side too"): lambda a, b: _merge_rescaling(a, b, rescale_b=False),
    Hint(RUNNING_MAX, "not the new block's max"): lambda a, b: _merge_rescaling(a, b, max_of="b"),
    Hint(RUNNING_MAX, "not only the old one"): lambda a, b: _merge_rescaling(a, b, max_of="a"),
    Hint(NORMALISED, "an output weighted by exp(m - m_new) alone, as if it were an unnormalised sum"):
        lambda a, b: _merge_rescaling(a, b, weigh_by_sums=False),
}


def _block_state_scaled(scale_of: Callable[[torch.Tensor, torch.Tensor], float]):
    """block_state with the scores divided by √(scale_of(q, k)) instead of √d."""
    def state(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None) -> State:
        d = q.shape[-1]
        return ref.block_state(q * math.sqrt(d / scale_of(q, k)), k, v, mask)
    return state


def _block_state_unnormalised(q, k, v, mask=None) -> State:
    m, l, o = ref.block_state(q, k, v, mask)
    return m, l, o * l[..., None]


def _logged(state: State, *, plus_max: bool) -> State:
    """The state with log l (plus m: the log-sum-exp of the scores) in l's place; -inf where l = 0."""
    m, l, o = state
    log_l = torch.log(l)
    return m, (log_l + m if plus_max else log_l), o


# What a state may keep in l's place instead of l: its log, with or without the max.
LOGGED_STATES: dict[str, Callable[[State], State]] = {
    "m + log l (the log-sum-exp of the scores)": lambda s: _logged(s, plus_max=True),
    "log l": lambda s: _logged(s, plus_max=False),
}


def _keep_block(start: int, stop: int, T_q: int) -> bool:
    return start <= T_q - 1  # the block's first key is not after every query


SKIP_MISTAKES: dict[Hint, Callable[[int, int, int], bool]] = {
    Hint(SKIP, "this skipped the block that starts at the last query's own key"): lambda start, stop, T_q:
        start < T_q - 1,
    Hint(SKIP, "this skipped the block that holds the last queries' keys because it reaches past them"):
        lambda start, stop, T_q: stop <= T_q,
}


BOTTOM_RIGHT: dict[Hint, Callable[[int, int, int], bool]] = {
    Hint(TOP_LEFT, "query i saw keys j <= i + T_k - T_q (bottom-right), not j <= i"): lambda start, stop, T_q: True,
    Hint(TOP_LEFT, "query i saw keys j <= i + T_k - T_q (bottom-right), not j <= i, in the blocks it visited"):
        _keep_block,
}


def _tiled(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, block_size: int, causal: bool = False, *,
           state=ref.block_state, merge=ref.merge_states, keep=_keep_block, keys: int | None = None,
           offset: int = 0) -> torch.Tensor | None:
    """Tiled attention in float64 from swappable pieces; `keys`: only the first `keys` keys are visited;
    `offset`: query i sees keys j <= i + offset (T_k - T_q: aligned bottom-right)."""
    q, k, v = q.double(), k.double(), v.double()
    T_q, T_k = q.shape[-2], (k.shape[-2] if keys is None else keys)
    states = []
    for start in range(0, T_k, block_size):
        stop = min(start + block_size, T_k)
        if causal and not keep(start, stop, T_q):
            continue
        mask = torch.arange(T_q)[:, None] + offset >= torch.arange(start, stop)[None, :] if causal else None
        states.append(state(q, k[..., start:stop, :], v[..., start:stop, :], mask))
    return reduce(merge, states)[2] if states else None


def _tiled_candidates(q, k, v, block_size: int, causal: bool) -> dict[Hint, torch.Tensor]:
    """What tiled attention returns with each known mistake, where it differs from the right answer."""
    found: dict[Hint, torch.Tensor | None] = {hint: _tiled(q, k, v, block_size, causal, merge=merge)
                                              for hint, merge in MERGE_MISTAKES.items()}
    found.update({hint: _tiled(q, k, v, block_size, causal, state=_block_state_scaled(scale))
                  for hint, scale in SCALE_MISTAKES.items()})
    found[Hint(NORMALISED, "the block's output must be divided by its l")] = _tiled(
        q, k, v, block_size, causal, state=_block_state_unnormalised)
    T_q, T_k = q.shape[-2], k.shape[-2]
    if T_k % block_size:
        found[Hint(LAST_BLOCK, "the keys after the last full block were left out")] = _tiled(
            q, k, v, block_size, causal, keys=T_k - T_k % block_size)
    if T_q < T_k:
        found[Hint(KEY_COUNT, "only the first T_q keys were seen")] = _tiled(
            q, k, v, block_size, causal, keys=T_q)
    if causal:
        found.update({hint: _tiled(q, k, v, block_size, True, keep=keep) for hint, keep in SKIP_MISTAKES.items()})
        if T_q != T_k:
            found.update({hint: _tiled(q, k, v, block_size, True, keep=keep, offset=T_k - T_q)
                          for hint, keep in BOTTOM_RIGHT.items()})
    return {hint: out for hint, out in found.items() if out is not None}


# ---------------------------------------------------------------- calling and reading back

def _state(got: Any, checked: str, m_shape: tuple[int, ...], d_v: int, device: str) -> State:
    """A state (m, l, o) of the right types and shapes, or a teaching failure."""
    if type(got) not in (tuple, list) or len(got) != 3:
        fail(checked, "a tuple (m, l, o)", describe(got), "return the state as three tensors: `return m, l, o`")
    m, l, o = got
    return (as_tensor(m, f"{checked}: m", shape=m_shape, device=device),
            as_tensor(l, f"{checked}: l", shape=m_shape, device=device),
            as_tensor(o, f"{checked}: o", shape=(*m_shape, d_v), device=device))


def _on(state: State, device: str) -> State:
    return tuple(t.to(device) for t in state)


def _close(got: torch.Tensor, want: torch.Tensor, device: str) -> bool:
    atol, rtol = tolerance(device)
    return torch.allclose(got.detach().cpu().double(), want.detach().cpu().double(), atol=atol, rtol=rtol,
                          equal_nan=True)


def _expect_state(got: State, want: State, checked: str, device: str,
                  mistakes: Callable[[], dict[Hint, State]] | None = None, hint: Hint | None = None) -> None:
    """m, then l, then o against `want`; a mistake (`mistakes()`, made only when something differs) is
    named by the first part it gets wrong."""
    want = tuple(t.detach().cpu() for t in want)
    for name, part in zip("mlo", got):
        bad = int(part.isnan().sum())
        expect(bad == 0, f"{checked}: {name}", "no NaN", f"{bad} NaN entries of {part.numel()}", EMPTY)
    empty_rows = want[0].isneginf()
    wrong_rows = int((got[0].cpu().isneginf() != empty_rows).sum())
    expect(wrong_rows == 0, f"{checked}: m", f"-inf exactly on the {int(empty_rows.sum())} rows that see no key",
           f"{wrong_rows} rows where m is -inf and should not be, or should be and is not", EMPTY)
    got, want = (_finite_m(got), *got[1:]), (_finite_m(want), *want[1:])
    if all(_close(g, w, device) for g, w in zip(got, want)):
        return
    wrong = mistakes() if mistakes else {}
    for i, (name, axes) in enumerate((("m", None), ("l", None), ("o", QUERY_FEATURE))):
        expect_close(got[i], want[i], f"{checked}: {name}" + (" (where it is finite)" if i == 0 else ""),
                     device=device, axes=axes, hint=hint,
                     candidates={mistake: (_finite_m(s), *s[1:])[i] for mistake, s in wrong.items()})


def _finite_m(state: State) -> torch.Tensor:
    """m with its -inf (the empty rows, compared on their own) as 0, so that a difference is a number."""
    m = state[0]
    return torch.where(m.isneginf(), torch.zeros_like(m), m)


def _block_state(student, device: str, q, k, v, mask=None) -> tuple[State, str]:
    checked = (f"block_state(q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
               + (")" if mask is None else f", mask {tuple(mask.shape)})") + f", {str(q.dtype).removeprefix('torch.')}")
    args = (q, k, v) if mask is None else (q, k, v, mask)
    got = student.call("block_state", *(a.to(device) for a in args))
    lead = _broadcast(tuple(q.shape[:-1]), (*k.shape[:-2], 1))
    return _state(got, checked, lead, v.shape[-1], device), checked


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two shapes (torch.broadcast_shapes imports sympy first, in every grading process)."""
    a, b = (1,) * (len(b) - len(a)) + a, (1,) * (len(a) - len(b)) + b
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _merge(student, device: str, a: State, b: State, checked: str) -> State:
    got = student.call("merge_states", _on(a, device), _on(b, device))
    return _state(got, checked, tuple(a[0].shape), a[2].shape[-1], device)


def _tiled_attention(student, device: str, q, k, v, block_size: int, causal: bool = False) -> tuple[torch.Tensor, str]:
    checked = (f"tiled_attention(q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, block_size={block_size}"
               + (", causal=True" if causal else "") + f"), {str(q.dtype).removeprefix('torch.')}")
    try:
        got = student.call("tiled_attention", q.to(device), k.to(device), v.to(device), block_size, causal=causal)
    except StudentError as exc:
        if exc.kind != EXCEPTION:
            raise  # not implemented yet, a timeout: the plugin says so
        fail(checked, "the output", exc.explain())  # named by the root cause found, if any
    return as_tensor(got, checked, shape=(*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=device), checked


def _expect_attention(got: torch.Tensor, q, k, v, block_size: int, causal: bool, checked: str, device: str) -> None:
    mask = ref.causal_mask(q.shape[-2], k.shape[-2]) if causal else None
    want, _ = ref.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
    bad = int(got.isnan().sum())
    expect(bad == 0, checked, "no NaN", f"{bad} NaN entries of {got.numel()}", EMPTY)
    if not _close(got, want, device):
        expect_close(got, want, checked, device=device, axes=QUERY_FEATURE,
                     candidates=_tiled_candidates(q, k, v, block_size, causal))


# ---------------------------------------------------------------- root causes, probed once per submission

PROBE_SIZES = (6, 7, 31, 4)  # T_q, T_b, d, d_v: d larger than any length, as in _sizes


def _same_state(got: Any, want: State) -> bool:
    """`got` is a state (m, l, o) equal to `want` (the -inf rows of m compared as such)."""
    if type(got) not in (tuple, list) or len(got) != 3 or not all(type(t) is torch.Tensor for t in got):
        return False
    if any(g.shape != w.shape for g, w in zip(got, want)):
        return False
    got = tuple(t.detach().cpu() for t in got)
    return bool((got[0].isneginf() == want[0].isneginf()).all()) and all(
        _close(g, w, "cpu") for g, w in zip((_finite_m(got), *got[1:]), (_finite_m(want), *want[1:])))


def _has_nan(got: Any) -> bool:
    return type(got) in (tuple, list) and any(type(t) is torch.Tensor and bool(t.isnan().any()) for t in got)


def _block_state_probe(student) -> Hint | None:
    """block_state on a block that one query cannot see at all: a NaN there, or a known mistake's state."""
    gen = torch.Generator().manual_seed(20)
    T_q, T_b, d, d_v = PROBE_SIZES
    q, k, v = _qkv(gen, T_q, T_b, d, d_v, lead=(1, 2))
    mask = torch.rand(T_q, T_b, generator=gen) < 0.6
    mask[:, 0], mask[2] = True, False  # query 2 sees no key
    got = student.call("block_state", q, k, v, mask)
    wide = (q.double(), k.double(), v.double(), mask)
    if _has_nan(got):
        return Hint(EMPTY, "a row whose keys are all masked came back NaN: exp(-inf - -inf)")
    return next((hint for hint, wrong in _block_state_mistakes(*wide).items() if _same_state(got, wrong)), None)


def _merge_probe(student) -> Hint | None:
    """merge_states of two blocks, the first and then the second holding the larger scores, then with an
    empty state: a known mistake's merge, or a NaN."""
    gen = torch.Generator().manual_seed(21)
    T_q, T_k, d, d_v = PROBE_SIZES[0], 12, PROBE_SIZES[2], PROBE_SIZES[3]
    blocks = [(0, 5), (5, T_k)]
    for shifts in ([6.0, 0.0], [0.0, 6.0]):
        q, k, v = _qkv(gen, T_q, T_k, d, d_v, lead=(1, 2))
        q, k = _lifted(q, k, blocks, shifts)
        a, b = (ref.block_state(q, k[..., x:y, :], v[..., x:y, :]) for x, y in blocks)
        got = student.call("merge_states", a, b)
        if not _same_state(got, ref.merge_states(a, b)):
            return next((hint for hint, wrong in _merge_mistakes(a, b).items() if _same_state(got, wrong)),
                        None) or _logged_merge(student, a, b)
    for pair in ((a, _empty_like(a)), (_empty_like(a), a), (_empty_like(a), _empty_like(a))):
        if _has_nan(student.call("merge_states", *pair)):
            return Hint(EMPTY, "merging an empty state gave NaN: exp(-inf - -inf)")
    return None


def _logged_merge(student, a: State, b: State) -> Hint | None:
    """merge_states handed the two states with a log in l's place (as LOGGED_STATES): one that merges those
    rightly keeps the log where SPEC has l."""
    for kept, logged in LOGGED_STATES.items():
        if _same_state(student.call("merge_states", logged(a), logged(b)), logged(ref.merge_states(a, b))):
            return Hint(LOG_SUM, f"merge_states merges states that keep {kept} in l's place")
    return None


def _tiled_probe(student) -> Hint | None:
    """tiled_attention with a short last block, then causally with a block that starts at the last query's key."""
    gen = torch.Generator().manual_seed(22)
    _, _, d, d_v = PROBE_SIZES
    for T_q, T_k, block_size, causal in ((6, 14, 4, False), (9, 19, 4, True)):
        q, k, v = _qkv(gen, T_q, T_k, d, d_v, lead=(1, 2))
        got = student.call("tiled_attention", q, k, v, block_size, causal=causal)
        if type(got) is not torch.Tensor or got.shape != (*q.shape[:-1], d_v):
            return None
        if bool(got.isnan().any()):
            return Hint(EMPTY, "causal attention came back NaN where a block is empty for some queries")
        mask = ref.causal_mask(T_q, T_k) if causal else None
        if not _close(got, ref.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)[0], "cpu"):
            return next((hint for hint, wrong in _tiled_candidates(q, k, v, block_size, causal).items()
                         if _close(got, wrong, "cpu")), None)
    return None


@pytest.fixture(scope="module")
def diagnoses(student) -> dict[str, Diagnosis]:
    return {"block_state": Diagnosis(lambda: _block_state_probe(student)),
            "merge_states": Diagnosis(lambda: _merge_probe(student)),
            "tiled_attention": Diagnosis(lambda: _tiled_probe(student))}


@pytest.fixture(autouse=True)
def _named_once(request, diagnoses):
    """A failed check names the root cause that the diagnoses of the pieces it relies on find, in order."""
    with root_cause(*covering(request.function, diagnoses)):
        yield


PIECES = ("block_state", "merge_states", "tiled_attention")  # tiled attention is built of the other two


# ---------------------------------------------------------------- block_state

@diagnosed("block_state")
@check("block_state: (m, l, o) match the reference (4-D, with and without a mask, float32 and float64)", points=1)
def test_block_state_values(student, gen, device):
    T_q, T_b, d, d_v = _sizes(gen)
    for dtype in (torch.float32, torch.float64):
        q, k, v = _qkv(gen, T_q, T_b, d, d_v, dtype)
        mask = torch.rand(2, 1, T_q, T_b, generator=gen) < 0.6
        mask[..., 0] = True  # every query sees a key: the empty row has a check of its own
        for m in (None, mask):
            got, checked = _block_state(student, device, q, k, v, m)
            wide = (q.double(), k.double(), v.double(), m)
            _expect_state(got, ref.block_state(*wide), checked, device, lambda: _block_state_mistakes(*wide))


def _block_state_mistakes(q, k, v, mask) -> dict[Hint, State]:
    found = {hint: _block_state_scaled(scale)(q, k, v, mask) for hint, scale in SCALE_MISTAKES.items()}
    found[Hint(NORMALISED, "o is the output over the block's keys, divided by l")] = \
        _block_state_unnormalised(q, k, v, mask)
    right = ref.block_state(q, k, v, mask)
    found.update({Hint(LOG_SUM, f"this l is {kept}"): logged(right) for kept, logged in LOGGED_STATES.items()})
    return found


@diagnosed("block_state", "merge_states")
@check("a fully masked block: m = -inf, l = 0, o = 0 and no NaN; merging it, or two of them, changes nothing", points=1)
def test_fully_masked_block(student, gen, device):
    T_q, T_b, d, d_v = _sizes(gen)
    q, k, v = _qkv(gen, T_q, 2 * T_b, d, d_v)
    mask = torch.ones(T_q, T_b, dtype=torch.bool)
    hidden = sorted(torch.randperm(T_q, generator=gen)[:2].tolist())
    mask[hidden] = False
    got, checked = _block_state(student, device, q, k[..., :T_b, :], v[..., :T_b, :], mask)
    checked += f" where queries {hidden} see no key"
    wide = (q.double(), k[..., :T_b, :].double(), v[..., :T_b, :].double(), mask)
    _expect_state(got, ref.block_state(*wide), checked, device, lambda: _block_state_mistakes(*wide))
    seen = ref.block_state(q, k[..., T_b:, :], v[..., T_b:, :])
    empty = _empty_like(seen)
    for a, b, label in ((seen, empty, "(state, empty state)"), (empty, seen, "(empty state, state)"),
                        (empty, empty, "(empty state, empty state)")):
        merged = _merge(student, device, a, b, f"merge_states{label}")
        _expect_state(merged, b if a is empty else a, f"merge_states{label}", device, lambda: _merge_mistakes(a, b))


# ---------------------------------------------------------------- merge_states

@diagnosed("merge_states")
@check("merge_states: two blocks merge into the state of all their keys (either one with the larger max)", points=2)
def test_merge_values(student, gen, device):
    T_q, T_k, d, d_v = _sizes(gen)
    split = draw(gen, 4, T_k - 4)[0]
    blocks = [(0, split), (split, T_k)]
    for dtype, shifts in ((torch.float32, [6.0, 0.0]), (torch.float32, [0.0, 6.0]), (torch.float64, None)):
        q, k, v = _qkv(gen, T_q, T_k, d, d_v, dtype)
        if shifts is not None:
            q, k = _lifted(q, k, blocks, shifts)
        a, b = (ref.block_state(q, k[..., x:y, :], v[..., x:y, :]) for x, y in blocks)
        where = "" if shifts is None else f", the {'first' if shifts[0] else 'second'} with the larger max"
        checked = (f"merge_states(state of keys 0..{split - 1}, state of keys {split}..{T_k - 1}){where}, "
                   f"{str(dtype).removeprefix('torch.')}")
        got = _merge(student, device, a, b, checked)
        _expect_state(got, ref.block_state(q.double(), k.double(), v.double()), checked, device,
                      lambda: _merge_mistakes(a, b))


def _merge_mistakes(a: State, b: State) -> dict[Hint, State]:
    wide = [tuple(t.double() for t in s) for s in (a, b)]
    return {hint: merge(*wide) for hint, merge in MERGE_MISTAKES.items()}


@diagnosed("merge_states")
@check("merge_states: order-free (a with b equals b with a; (a, b) then c equals a then (b, c))", points=1)
def test_merge_order_free(student, gen, device):
    T_q, T_k, d, d_v = _sizes(gen)
    q, k, v = _qkv(gen, T_q, T_k, d, d_v)
    cuts = sorted(torch.randperm(T_k - 2, generator=gen)[:2].add(1).tolist())
    blocks = [(0, cuts[0]), (cuts[0], cuts[1]), (cuts[1], T_k)]
    q, k = _lifted(q, k, blocks, [2.0, 0.0, 4.0])  # each merge changes some row's max
    a, b, c = (ref.block_state(q, k[..., x:y, :], v[..., x:y, :]) for x, y in blocks)
    ab, ba = _merge(student, device, a, b, "merge_states(a, b)"), _merge(student, device, b, a, "merge_states(b, a)")
    hint = _named_merge(ab, a, b, device)
    _expect_state(ba, ab, "merge_states(b, a) against merge_states(a, b)", device, hint=hint)
    left = _merge(student, device, ab, c, "merge_states(merge_states(a, b), c)")
    bc = _merge(student, device, b, c, "merge_states(b, c)")
    right = _merge(student, device, a, bc, "merge_states(a, merge_states(b, c))")
    _expect_state(right, left, "merge_states(a, merge_states(b, c)) against merge_states(merge_states(a, b), c)",
                  device, hint=hint)


def _named_merge(got: State, a: State, b: State, device: str) -> Hint | None:
    """The known mistake whose merge of a and b the submission's equals, if any."""
    return next((hint for hint, wrong in _merge_mistakes(a, b).items()
                 if all(_close(g, w, device) for g, w in zip(got, wrong))), None)


# ---------------------------------------------------------------- tiled_attention

@diagnosed(*PIECES)
@check("tiled_attention: equals attention for block sizes that do and do not divide T_k (T_q ≠ T_k, "
       "B, H ≥ 2, float32 and float64)", points=2)
def test_tiled_values(student, gen, device):
    T_q, T_k, d, d_v = _sizes(gen)
    block_size, blocks = draw(gen, 3, 5)[0], draw(gen, 4, 5)[0]
    dividing, short = block_size * blocks, draw(gen, 1, block_size - 1)[0]  # T_k >= 12 > T_q
    cases = ((torch.float32, block_size, dividing), (torch.float32, block_size, dividing + short),
             (torch.float64, block_size + 1, dividing + short), (torch.float32, T_k + 3, T_k))
    for dtype, block_size, T_k in cases:
        q, k, v = _qkv(gen, T_q, T_k, d, d_v, dtype)
        got, checked = _tiled_attention(student, device, q, k, v, block_size)
        _expect_attention(got, q, k, v, block_size, False, checked, device)


@diagnosed(*PIECES)
@check("tiled_attention: causal, top-left aligned as is_causal (T_q < T_k, with a block starting at the last "
       "query's key, and T_q > T_k)", points=2)
def test_tiled_causal(student, gen, device):
    block_size = draw(gen, 3, 5)[0]
    T = block_size * draw(gen, 2, 3)[0] + 1  # a block starts at key T - 1: the last query needs it
    _, _, d, d_v = _sizes(gen)
    for T_q, T_k in ((T, T + 2 * block_size + 2), (T + 6, T - 2)):
        q, k, v = _qkv(gen, T_q, T_k, d, d_v)
        got, checked = _tiled_attention(student, device, q, k, v, block_size, causal=True)
        _expect_attention(got, q, k, v, block_size, True, checked, device)


@diagnosed(*PIECES)
@check("tiled_attention: right and finite when one block's scores are 100 or more above the next one's", points=1)
def test_tiled_large_gaps(student, gen, device):
    T_q, T_k, d, d_v = _sizes(gen)
    block_size = 4
    q, k, v = _qkv(gen, T_q, T_k, d, d_v)
    blocks = [(a, min(a + block_size, T_k)) for a in range(0, T_k, block_size)]
    q, k = _lifted(q, k, blocks, [(120.0, 0.0, 240.0)[i % 3] for i in range(len(blocks))])
    v = 2 + 0.5 * v  # outputs far from 0, so rtol covers the rounding of scores near 240 in float32
    got, checked = _tiled_attention(student, device, q, k, v, block_size)
    checked += ", blocks' scores raised by 120, 0, 240, 120, 0, ..."
    bad = int((~got.isfinite()).sum())
    expect(bad == 0, checked, "finite outputs (each state keeps its own max, merged into the larger)",
           f"{bad} inf or NaN entries of {got.numel()}", RUNNING_MAX)
    want, _ = ref.scaled_dot_product_attention(q.double(), k.double(), v.double())
    if not torch.allclose(got.cpu().double(), want, atol=1e-3, rtol=1e-3):  # float32 scores near 240 round off
        expect_close(got, want, checked, device=device, axes=QUERY_FEATURE,
                     candidates=_tiled_candidates(q, k, v, block_size, False))


@check("tiled_attention: block_size < 1 raises ValueError", points=1)
def test_tiled_bad_block_size(student, gen):
    T_q, T_k, d, d_v = _sizes(gen)
    q, k, v = _qkv(gen, T_q, T_k, d, d_v)
    for block_size in (0, -draw(gen, 1, 64)[0]):
        checked = f"tiled_attention(q, k, v, block_size={block_size})"
        try:
            got = student.call("tiled_attention", q, k, v, block_size)
        except StudentError as exc:
            if exc.kind == EXCEPTION and exc.type == "ValueError":
                continue
            if exc.kind != EXCEPTION:
                raise  # not implemented yet, a timeout: the plugin says so
            fail(checked, "ValueError", exc.explain(), "check block_size first: raise ValueError(...) when it is below 1")
        fail(checked, "ValueError", describe(got), "check block_size first: raise ValueError(...) when it is below 1")


# ---------------------------------------------------------------- tiled_score_bytes

@check("tiled_score_bytes: B · H · T_q · block_size · itemsize", points=1)
def test_tiled_score_bytes(student, gen):
    T_q, block_size = draw(gen, 500, 9000)[0], draw(gen, 16, 256)[0]
    H, B = draw(gen, 2, 16, 2)
    for kwargs in ({}, {"n_heads": H, "batch": B}, {"dtype": torch.float16}, {"n_heads": H, "dtype": torch.float64}):
        shown = "".join(f", {key}={value}" for key, value in kwargs.items())
        checked = f"tiled_score_bytes({T_q}, {block_size}{shown})"
        got = as_number(student.call("tiled_score_bytes", T_q, block_size, **kwargs), checked)
        want = ref.tiled_score_bytes(T_q, block_size, **kwargs)
        hint = ("one block of scores is T_q × block_size, not T_q × T_q" if got == want // block_size * T_q
                else "B · H · T_q · block_size · itemsize")
        expect(got == want, checked, f"{want:,} bytes", f"{got:,.0f}", hint)


# ---------------------------------------------------------------- what it holds, what it skips

MEMORY_T, MEMORY_D, MEMORY_BLOCK = 3072, 8, 16
# What the call uses, by the kernel, wherever it runs (isolation.held, docs/measured-checks.md): every page its
# process touches for the first time (new, or a copy of what it inherited from import or from the warm-up call
# on two blocks of keys, which runs in the process it is forked from), its private memory when it starts, what
# the sandbox writes through system calls, its shared mappings, and what the grader's process serving other
# parts' names holds beyond its start; no other process of the sandbox may run meanwhile. Few features and small
# blocks keep a correct version's memory small (its inputs, its output and a few blocks of 192 KiB, beside some
# 5 MiB that any call costs) while the grid stays T × T: 36 MiB. The corpus's correct versions use 7 to 11 MiB,
# versions that keep the grid in memory from the warm-up or from import 41 MiB (docs/measured-checks.md).
MEMORY_HELD = 20 * 2**20
WARMUP_KEYS = 2 * MEMORY_BLOCK
MEMORY_ROWS = 16  # compared with the reference, which builds a grid of these rows only


@diagnosed(*PIECES)
@check(f"tiled_attention: right at T = {MEMORY_T:,} using at most {MEMORY_HELD >> 20} MiB, where the T × T "
       f"grid alone takes {ref.score_grid_bytes(MEMORY_T) >> 20} MiB", points=2)
def test_tiled_memory(student, gen, diagnoses):
    q, k, v = (torch.randn(1, MEMORY_T, MEMORY_D, generator=gen) for _ in range(3))
    checked = (f"tiled_attention(q, k, v of shape (1, {MEMORY_T}, {MEMORY_D}), block_size={MEMORY_BLOCK}): the memory "
               "it uses, wherever it computes and whenever that memory was first allocated")
    warmup = ((q, k[:, :WARMUP_KEYS], v[:, :WARMUP_KEYS]), {"block_size": MEMORY_BLOCK})
    got, held = student.call_holding(warmup, "tiled_attention", q, k, v, block_size=MEMORY_BLOCK)
    expected = (f"at most {MEMORY_HELD >> 20} MiB: its inputs, its output and a block of {MEMORY_BLOCK} keys' scores "
                f"({byte_size(ref.tiled_score_bytes(MEMORY_T, MEMORY_BLOCK))}) at a time")
    if isinstance(held, str):
        fail(checked, expected, held, WHOLE_GRID)
    if held > MEMORY_HELD:
        diagnoses["tiled_attention"].note(WHOLE_GRID)  # what the causal check's time then shows too
        fail(checked, expected, f"{byte_size(held)} used", WHOLE_GRID)
    got = as_tensor(got, checked, shape=(1, MEMORY_T, MEMORY_D), dtype=torch.float32)
    rows = torch.randperm(MEMORY_T, generator=gen)[:MEMORY_ROWS].sort().values
    want, _ = ref.scaled_dot_product_attention(q[:, rows].double(), k.double(), v.double())
    expect_close(got[:, rows], want, f"{checked}: rows {rows[:4].tolist()}... of the output", axes=QUERY_FEATURE)


# T_k = 16 T_q: a causal call needs the blocks up to the last query (8 of 128) and none after them. Few features
# keep what is sent small beside the work a call must do (the sandbox's CPU time counts its reading the inputs).
WORK_T_Q, WORK_KEYS, WORK_D, WORK_BLOCK = 1024, 16, 8, 128
WORK_ROUNDS = 3
# First, without the clock: keys and values after every query are NaN, which a version that computes and masks
# those blocks spreads into its output (0 × NaN), and one that skips them never reads. Then the work, for a version
# whose guard of empty blocks drops the NaN, against a yardstick the submission cannot move: the CPU time the
# grader itself takes, in this process, for the reference's tiles of the blocks a causal call needs (the first
# T_q keys). The submission's side is the CPU time its call caused, read from the kernel (`Student.last_work_seconds`:
# every process of its sandbox, and the grader serving other parts' names to it), which a busy machine does not
# lengthen as it does the wall time. Each round times the yardstick and the call side by side; the verdict is the
# ratio of their medians. The corpus's tiles versions, measured so: those that skip 1.4 to 2.6 (float64 blocks the
# slowest), those that compute every block 22 to 24 (docs/measured-checks.md). A version may be six times as slow as
# the reference's plain blocks, what it is sent included, and still be seen to skip.
WORK_RATIO = 6.0
Timed = tuple[float | None, float]  # (CPU seconds, where the kernel counted them; wall seconds)


@diagnosed(*PIECES)
@check(f"tiled_attention: causal skips the blocks after the last query (with T_k = {WORK_KEYS} T_q: never read, and "
       f"under {WORK_RATIO:g} × the reference's time for the blocks it needs, by the grader's clock)", points=1)
def test_causal_work(student, gen):
    T_k = WORK_KEYS * WORK_T_Q
    q = torch.randn(1, WORK_T_Q, WORK_D, generator=gen)
    k, v = (torch.randn(1, T_k, WORK_D, generator=gen) for _ in range(2))
    unseen_k, unseen_v = k.clone(), v.clone()
    unseen_k[:, WORK_T_Q:], unseen_v[:, WORK_T_Q:] = float("nan"), float("nan")  # whole blocks: WORK_T_Q % WORK_BLOCK == 0
    shapes = f"q (1, {WORK_T_Q}, {WORK_D}), k, v (1, {T_k}, {WORK_D}), block_size={WORK_BLOCK}, causal=True"
    probe = f"tiled_attention({shapes}) with NaN in every key and value after the last query"
    got = as_tensor(student.call("tiled_attention", q, unseen_k, unseen_v, WORK_BLOCK, causal=True), probe,
                    shape=tuple(q.shape), dtype=torch.float32)
    expect(bool(torch.isfinite(got).all()), probe, "no NaN: those blocks come after every query and are skipped, "
           "never read", f"NaN in {int((~torch.isfinite(got)).any(-1).sum())} of {WORK_T_Q} rows: blocks after every "
           "query were computed (and masked)", SKIP)
    checked = f"tiled_attention({shapes}): the work it does"
    needed = (q, k[:, :WORK_T_Q], v[:, :WORK_T_Q])
    rounds: list[tuple[Timed, Timed]] = []  # (the call's, the yardstick's)
    for attempt in range(WORK_ROUNDS):
        got = student.call("tiled_attention", q, k, v, WORK_BLOCK, causal=True)
        call = (student.last_work_seconds, student.last_seconds)
        if attempt == 0:
            _expect_rows(got, q, k, v, f"{checked}: its output")
        rounds.append((call, _yardstick(*needed)))
    (calls, yardsticks), clock = _on_one_clock(rounds)
    ratio = statistics.median(calls) / statistics.median(yardsticks)
    expect(ratio < WORK_RATIO, checked, f"under {WORK_RATIO:g} × the reference's time for the {WORK_T_Q // WORK_BLOCK} "
           f"blocks up to the last query (a version that skips the other {T_k // WORK_BLOCK - WORK_T_Q // WORK_BLOCK} "
           "takes about 1 ×)", f"{ratio:.1f} × (the medians of {WORK_ROUNDS} rounds: {statistics.median(calls) * 1e3:.1f} "
           f"ms against {statistics.median(yardsticks) * 1e3:.1f} ms of {clock})", SKIP)


def _yardstick(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> Timed:
    """The reference's causal tiles over the keys a causal call needs, timed on this thread, which does all of
    that work: torch's thread pool is set for each thread that uses it (a Dask worker grades on threads of its
    own), so it is set here to one thread, as in a sandbox."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cpu, wall = time.thread_time(), time.perf_counter()
        ref.tiled_attention(q, k, v, WORK_BLOCK, causal=True)
        return time.thread_time() - cpu, time.perf_counter() - wall
    finally:
        torch.set_num_threads(threads)


def _on_one_clock(rounds: list[tuple[Timed, Timed]]) -> tuple[tuple[list[float], list[float]], str]:
    """The calls' times and the yardstick's on one clock, and its name: CPU time where the kernel counted every
    call, else wall time (a process gone before its count was read has none; a call's wall time against the
    yardstick's CPU time would compare nothing)."""
    on_cpu = all(call[0] is not None for call, _ in rounds)
    pick = (lambda timed: timed[0]) if on_cpu else (lambda timed: timed[1])
    return ([pick(call) for call, _ in rounds], [pick(stick) for _, stick in rounds]), \
        "CPU time" if on_cpu else "wall time"


def _expect_rows(got: Any, q, k, v, checked: str) -> None:
    """The causal output is right on some rows: a quick answer must also be the right one. The last rows see
    every block up to the last query, so a slip in merging shows there whatever the inputs (in a row whose
    first block holds its largest score, a merge that forgets to rescale is right)."""
    got = as_tensor(got, checked, shape=tuple(q.shape), dtype=torch.float32)
    T_q = q.shape[-2]
    rows = torch.tensor([0, T_q // 2, *range(T_q - 16, T_q)])
    mask = ref.causal_mask(q.shape[-2], k.shape[-2])[rows]
    want, _ = ref.scaled_dot_product_attention(q[:, rows].double(), k.double(), v.double(), mask)
    expect_close(got[:, rows], want, f"{checked}, rows 0, {T_q // 2} and {T_q - 16} to {T_q - 1}", axes=QUERY_FEATURE)
