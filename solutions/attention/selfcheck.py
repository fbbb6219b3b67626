# Source of truth: assignments/attention/selfcheck.py (release/ and solutions/ hold copies; edit the source).
"""Public self-checks for the attention notebook.

Each ``check_<name>(fn)`` runs a few quick tests on one of your functions and
prints a single line:

* ``✔ name: ...`` when every test passed;
* ``✘ name: ...`` naming what was checked, what was expected against what your
  function returned, and the slip that most often causes it;
* ``name is not implemented yet`` while the function still raises
  ``NotImplementedError``.

The checks never raise and finish well under a second. They use the figures
worked out in the notebook and properties every correct answer has (rows that
sum to 1, zeros where a mask blocks, shapes), and PyTorch's own
``scaled_dot_product_attention`` and ``MultiheadAttention`` as a trusted
comparison. Passing them is a good sign, not a guarantee: the graded tests
use other inputs.

``what_is_left(section, globals())`` runs every check of one section quietly
and returns what is not done or not right yet ("" when everything passes).
The grade cell at the end of each section asserts that it is empty, so
*Restart & Run All* shows where each section stands. Under nbgrader's
*Validate* button the last grade cell alone fails, and its message starts with
the plain list of every section not finished, then what is left in each (the
others pass quietly: Validate shows each failed cell's code and traceback, so
six of them hid the list). While nbgrader grades a submission it returns ""
at once and runs nothing: the hidden tests in the grade cell decide the score.

``needs(...)`` wraps the plot and experiment cells so that they are skipped
politely until the functions they use are implemented.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import math
import os
import statistics
import sys
import sysconfig
import textwrap
import time
from typing import Any, Callable, Iterable, Mapping

import torch
import torch.nn.functional as F
from torch import nn

__all__ = [
    "needs",
    "results",
    "SECTIONS",
    "what_is_left",
    "notebook_left",
    "check_causal_average",
    "check_causal_mask",
    "check_padding_mask",
    "check_apply_mask",
    "check_combine_masks",
    "check_attention_scores",
    "check_attention_weights",
    "check_scaled_dot_product_attention",
    "check_dot_product_spread",
    "check_softmax_entropy",
    "check_split_heads",
    "check_merge_heads",
    "check_causal_self_attention",
    "check_CausalSelfAttention",
    "check_sinusoidal_encoding",
    "check_position_similarity",
    "check_add_positions",
    "check_is_permutation_equivariant",
    "check_score_grid_bytes",
    "check_time_call",
    "check_time_attention",
    "check_fit_power_law",
    "check_block_state",
    "check_merge_states",
    "check_tiled_attention",
    "check_tiled_score_bytes",
]

#: Outcome of the latest run of each check: name -> True (passed) / False.
results: dict[str, bool] = {}

#: The check that ran last and why it did not pass: "not done" (a function
#: still raises NotImplementedError), "not right" (a ✘ line) or None (passed).
_last: tuple[str, str | None] = ("", None)

_THIS_FILE = os.path.abspath(__file__)
_STDLIB = os.path.abspath(sysconfig.get_paths()["stdlib"]) + os.sep

# BEGIN HINTS
# Written by `make release` from the hints catalogue (autograder/hints.py): the likely
# mistakes in the graders' words. Change them there, not here.
HINTS: dict[str, str] = {
    "masks.itself": "a token may attend to itself",
    "masks.off_by_one": "off by one: query i sees key i+1",
    "masks.convention": "this contract uses True = may attend",
    "masks.transposed": "rows are queries, columns are keys",
    "masks.fill_where_false": "fill where the mask is False",
    "masks.fill_zero": "0 is a score, not a block: use -inf",
    "masks.renormalise": "renormalise, or mask before softmax",
    "masks.arithmetic": "build a fill, not arithmetic on booleans",
    "masks.on_queries": "padding hides keys (the last dimension)",
    "masks.top_left": "top-left alignment, as is_causal",
    "masks.pure": "don't modify inputs",
    "masks.on_device": "create masks on the input's device",
    "masks.average": "each row is an average: weights 1/(i+1)",
    "masks.and_not_or": "a query may attend a key only if both masks allow it (and, not or)",
    "masks.padding_off_by_one": "off by one: positions 0..length-1 are the real tokens",
    "scaling.dim": "softmax over the keys: dim=-1",
    "scaling.sqrt_d_not_d": "divide by √d, not d",
    "scaling.no_scale": "divide by √d",
    "scaling.divide_not_multiply": "divide, don't multiply",
    "scaling.last_dimension": "d is the last dimension",
    "scaling.head_dimension": "scale by the head dimension",
    "scaling.k_transpose": "k.transpose(-2, -1)",
    "scaling.max": "subtract the row max",
    "scaling.xlogy": "0·log 0 = 0 (torch.special.xlogy)",
    "scaling.spread": "std over the n dot products",
    "heads.split_no_transpose": "view as (B, T, H, dh), then transpose(1, 2)",
    "heads.merge_no_transpose": "transpose back before reshaping",
    "heads.contiguous": "use reshape or .contiguous()",
    "heads.strided_heads": "heads own contiguous feature blocks",
    "heads.qkv_order": "[q | k | v], each d_model wide",
    "heads.layout": "follow the module layout",
    "heads.per_head": "return one weight grid per head",
    "heads.dropout": "no dropout: the module holds only qkv and proj (and is in training mode until .eval())",
    "positions.sin_even": "even columns are sin",
    "positions.interleaves": "this contract interleaves",
    "positions.pairs": "frequencies go by pairs",
    "positions.exponent": "base^(2i/d)",
    "positions.from_zero": "positions start at 0",
    "positions.angles_in_float": "compute angles in float (64 is safest)",
    "positions.cosine": "cosine = dot of unit vectors",
    "timing.synchronise": "synchronise before reading the clock",
    "timing.warmup": "run untimed warm-up calls",
    "timing.median": "take the median of several runs",
    "timing.grid_bytes": "B · H · T² · itemsize",
    "timing.log_log": "fit log(time) against log(T)",
    "timing.materialised_grid": "the study is about the materialised grid",
    "timing.clock": "time each call of fn(*args) with time.perf_counter()",
    "timing.units": "return wall-clock seconds: time.perf_counter() after minus before",
    "timing.total": "take the median of the timed calls",
    "timing.count": "call fn exactly warmup + repeats times",
    "timing.fresh": "q, k, v of shape (1, T, d_head), fresh for each T",
    "tiles.rescale": "multiply the old sum and output by exp(m_old - m_new)",
    "tiles.running_max": "the running max is the max of both",
    "tiles.empty": "an empty state is m = -inf, l = 0, o = 0; guard it",
    "tiles.normalised": "keep o normalised per SPEC, weight by l·exp(m - m_new)",
    "tiles.skip": "a block is skipped only when its first key is after every query",
    "tiles.key_count": "the keys are k's: T_k = k.shape[-2], not the number of queries",
    "tiles.log_sum": "l is the sum of exp(score - m), not its log",
    "tiles.last_block": "the last block may be shorter",
    "tiles.whole_grid": "hold one block of scores at a time",
}
# END HINTS


def _hint(key: str, detail: str = "") -> str:
    """A likely mistake in the graders' words (HINTS), then what this check saw that points to it."""
    return f"{HINTS[key]} — {detail}" if detail else HINTS[key]


# ---------------------------------------------------------------------------
# Reporting machinery
# ---------------------------------------------------------------------------


class _Fail(Exception):
    """A failed expectation: what was checked, expected, got, likely mistake."""

    def __init__(self, what: str, expected: Any = None, got: Any = None,
                 hint: str | None = None) -> None:
        parts = [what]
        if expected is not None or got is not None:
            parts.append(f"expected {_fmt(expected)}, got {_fmt(got)}")
        self.checked = "; ".join(parts)
        self.hint = hint
        super().__init__(self.checked + (f". Likely mistake: {hint}" if hint else ""))


def _fmt(value: Any, limit: int = 8) -> str:
    """A short, readable rendering of numbers, tensors and shapes."""
    if isinstance(value, str):
        return value
    if isinstance(value, torch.Size):
        return str(tuple(value))
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.device.type == "meta":
            return f"<meta tensor {tuple(t.shape)}>"
        t = t.cpu()
        if t.dim() == 0:
            return _fmt(t.item())
        if t.dtype == torch.bool:
            t = t.int()
        if t.dim() >= 2 and t.shape[-2] <= 4 and t.shape[-1] <= 6 and t.numel() <= 24:
            rows = t.reshape(-1, t.shape[-1]).tolist()
            return "[" + ", ".join(_fmt_list(r) for r in rows) + "]"
        flat = t.reshape(-1).tolist()
        text = _fmt_list(flat[:limit])
        if len(flat) > limit:
            text = text[:-1] + ", …]"
        return text
    if isinstance(value, float):
        return _fmt_number(value)
    if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
        return "(" + ", ".join(str(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value):
        return _fmt_list(list(value))
    return repr(value)


def _fmt_list(values: list) -> str:
    return "[" + ", ".join(_fmt_number(v) for v in values) + "]"


def _fmt_number(value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value == int(value) and abs(value) < 1e6:
            return str(int(value))
        return f"{value:.4g}"
    return str(value)


def _is_library(filename: str) -> bool:
    """Whether a traceback frame belongs to this file, PyTorch or Python itself."""
    filename = os.path.abspath(filename)
    return (filename == _THIS_FILE or "site-packages" in filename or "dist-packages" in filename
            or filename.startswith(_STDLIB))


def _culprit(tb: Any) -> str | None:
    """Name of the user function (or class) in which an exception was raised."""
    frame_name = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not _is_library(code.co_filename) and code.co_name != "<module>":
            name = code.co_name
            self_obj = tb.tb_frame.f_locals.get("self")
            if self_obj is not None and not isinstance(self_obj, type):
                name = type(self_obj).__name__
            frame_name = name
        tb = tb.tb_next
    return frame_name


def _where(tb: Any) -> str:
    """' (in fn: `source line`)' for the innermost user frame, if any."""
    found = ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if not _is_library(code.co_filename):
            line = linecache.getline(code.co_filename, tb.tb_lineno).strip()
            found = f" (in {code.co_name}" + (f": `{line}`" if line else "") + ")"
        tb = tb.tb_next
    return found


def _run(name: str, body: Callable[[], str], checked: Any = None) -> None:
    """Run one check body and print exactly one line about it. When it fails and ``checked`` (the function
    or class checked) calls another of your functions whose own self-check fails, that one is named as the
    likely cause: a correct function fails too when a function it calls is wrong."""
    try:
        message = body()
    except NotImplementedError:
        culprit = _culprit(sys.exc_info()[2]) or name
        if culprit == name:
            print(f"{name} is not implemented yet")
        else:
            print(f"{name}: cannot check yet, {culprit} is not implemented yet")
        _record(name, "not done")
        return
    except _Fail as failure:
        cause = _cause(name, checked)
        print(f"✘ {name}: {failure.checked + cause if cause else failure}")
        _record(name, "not right")
        return
    except Exception as error:  # report, never raise
        where = _where(sys.exc_info()[2])
        print(f"✘ {name} raised {type(error).__name__}: {error}{where}{_cause(name, checked)}")
        _record(name, "not right")
        return
    print(f"✔ {name}: {message}")
    _record(name, None)


#: The checks being run quietly to find a failure's likely cause (never searched again from inside).
_tracing: set[str] = set()


def _cause(name: str, checked: Any) -> str:
    """". Likely cause: ..." when a function that ``checked`` calls, directly or through others, fails its
    own self-check (the deepest such one: the others may fail only because they call it); "" otherwise."""
    if checked is None or _tracing:
        return ""
    _tracing.add(name)
    try:
        culprit, path = _failing_callee(checked, [])
    finally:
        _tracing.discard(name)
    if culprit is None:
        return ""
    through = f" (through {', '.join(path)})" if path else ""
    part, own = _section_of(culprit), _section_of(name)
    graded = (f"the graded tests of {name} use a correct {culprit} (another section's), so {name} itself may "
              "be right" if part != own else f"then run this check again")
    return (f". Likely cause: {culprit}, which {name} calls{through}, fails its own self-check: fix {culprit} "
            f"first; {graded}")


def _failing_callee(checked: Any, path: list[str]) -> tuple[str | None, list[str]]:
    """The deepest of your checked functions that ``checked`` calls and whose self-check fails, and the
    functions between them; (None, []) when none fails."""
    namespace = _namespace(checked)
    for callee in _calls(checked):
        if callee in path or namespace.get(callee) is checked:
            continue
        check, names = _CHECKS[callee]
        if _quiet_outcome(check, [namespace.get(n) for n in names]) != "not right":
            continue
        deeper, between = _failing_callee(namespace[callee], [*path, callee])
        return (deeper, between) if deeper is not None else (callee, path)
    return None, []


def _namespace(checked: Any) -> dict[str, Any]:
    """The globals your function (or your class's methods) see: the notebook's."""
    functions = [checked] if callable(checked) and hasattr(checked, "__code__") else \
        [f for f in vars(checked).values() if hasattr(f, "__code__")] if isinstance(checked, type) else []
    return functions[0].__globals__ if functions else {}


def _calls(checked: Any) -> list[str]:
    """The names of your other checked functions that ``checked`` uses (its code, nested code and a class's
    methods), in the order it names them; only those defined where it is (your notebook), not imported."""
    if isinstance(checked, type):
        codes = [f.__code__ for f in vars(checked).values() if hasattr(f, "__code__")]
    else:
        codes = [checked.__code__] if hasattr(checked, "__code__") else []
    found: list[str] = []
    while codes:
        code = codes.pop(0)
        found += [n for n in code.co_names if n not in found]
        codes += [c for c in code.co_consts if hasattr(c, "co_names")]
    namespace = _namespace(checked)
    home = getattr(checked, "__module__", None)
    return [n for n in found if n in _CHECKS and getattr(namespace.get(n), "__module__", None) == home]


def _section_of(name: str) -> str:
    return next(section for section, (_, checks) in SECTIONS.items() if any(n[0] == name for _, n in checks))


def _record(name: str, shortfall: str | None) -> None:
    """Remember the outcome of a check for ``results`` and ``what_is_left``."""
    global _last
    _last = (name, shortfall)
    results[name] = shortfall is None


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _tensor(value: Any, what: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise _Fail(f"{what} should return a torch.Tensor", "a Tensor",
                    type(value).__name__)
    return value


def _shape(value: torch.Tensor, shape: tuple, what: str, hint: str | None = None) -> None:
    if tuple(value.shape) != tuple(shape):
        raise _Fail(f"shape of {what}", tuple(shape), tuple(value.shape), hint)


def _dtype(value: torch.Tensor, dtype: torch.dtype, what: str, hint: str | None = None) -> None:
    if value.dtype != dtype:
        raise _Fail(f"dtype of {what}", str(dtype), str(value.dtype), hint)


def _close(a: torch.Tensor, b: torch.Tensor, atol: float = 1e-5, rtol: float = 1e-4) -> bool:
    a = a.detach().to(torch.float64)
    b = b.detach().to(torch.float64)
    return a.shape == b.shape and bool(torch.allclose(a, b, atol=atol, rtol=rtol))


def _unchanged(before: torch.Tensor, after: torch.Tensor, what: str) -> None:
    if not torch.equal(before, after):
        raise _Fail(f"{what} was modified", hint=_hint("masks.pure", "an in-place operation (masked_fill_, +=) changed the caller's "
                                                    "tensor: use the out-of-place version"))


def _raises_value_error(call: Callable[[], Any], what: str, hint: str) -> None:
    try:
        call()
    except ValueError:
        return
    except NotImplementedError:
        raise
    except Exception as error:
        raise _Fail(f"{what} should raise ValueError", "ValueError",
                    f"{type(error).__name__}: {error}", hint) from None
    raise _Fail(f"{what} should raise ValueError", "ValueError", "no error", hint)


def _bool_grid(rows: Iterable[Iterable[int]]) -> torch.Tensor:
    return torch.tensor([[bool(v) for v in row] for row in rows])


# The hand-worked example of sections 2.1 and 2.2: "the cat sat down", 2-number vectors.
_CAT_Q = torch.tensor([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0], [2.0, 0.5]])
_CAT_K = torch.tensor([[0.0, 1.0], [2.0, 0.0], [0.5, 0.5], [0.0, 0.5]])
_CAT_RAW = torch.tensor([[1.0, 0.0, 0.5, 0.5],
                         [1.0, 0.0, 0.5, 0.5],
                         [0.0, 4.0, 1.0, 0.0],
                         [0.5, 4.0, 1.25, 0.25]])
_CAT_WEIGHTS = torch.tensor([[0.345, 0.170, 0.242, 0.242],
                             [0.345, 0.170, 0.242, 0.242],
                             [0.048, 0.808, 0.097, 0.048],
                             [0.065, 0.771, 0.110, 0.054]])
_CAT_CAUSAL = torch.tensor([[1.000, 0.000, 0.000, 0.000],
                            [0.670, 0.330, 0.000, 0.000],
                            [0.050, 0.848, 0.102, 0.000],
                            [0.065, 0.771, 0.110, 0.054]])
_TRIL4 = _bool_grid([[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]])


def _top_left(T_q: int, T_k: int) -> torch.Tensor:
    """The contract's rule written out: query i may see key j iff j <= i."""
    return _bool_grid([[j <= i for j in range(T_k)] for i in range(T_q)])


# ---------------------------------------------------------------------------
# Plot and experiment cells
# ---------------------------------------------------------------------------


class needs:
    """Skip a plot or experiment politely until the functions it uses work.

    Use it around the body of a plot cell::

        with selfcheck.needs(causal_mask, attention_weights):
            ...  # plotting code that calls your functions

    When the body raises ``NotImplementedError`` it prints
    ``(plot skipped: implement causal_mask first)``, naming the function that
    raised; any other error is reported in one line too. Either way the cell
    finishes without an error and any half-drawn figure is discarded, so the
    notebook keeps running top to bottom.
    """

    def __init__(self, *functions: Callable[..., Any], what: str = "plot") -> None:
        self.functions = functions
        self.what = what
        self._figures: set[int] = set()

    def __enter__(self) -> "needs":
        self._figures = set(self._open_figures())
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> bool:
        if exc_type is None:
            return False
        if not issubclass(exc_type, Exception):
            return False  # let KeyboardInterrupt and friends through
        self._close_new_figures()
        culprit = _culprit(tb)
        if culprit is None:
            culprit = next((getattr(f, "__name__", None) for f in self.functions), None) or "the functions above"
        if issubclass(exc_type, NotImplementedError):
            print(f"({self.what} skipped: implement {culprit} first)")
        else:
            print(f"({self.what} skipped: {culprit} raised {exc_type.__name__}: {exc}{_where(tb)})")
        return True

    @staticmethod
    def _open_figures() -> list[int]:
        if "matplotlib.pyplot" not in sys.modules:
            return []
        return list(sys.modules["matplotlib.pyplot"].get_fignums())

    def _close_new_figures(self) -> None:
        if "matplotlib.pyplot" not in sys.modules:
            return
        plt = sys.modules["matplotlib.pyplot"]
        for number in self._open_figures():
            if number not in self._figures:
                plt.close(number)


# ---------------------------------------------------------------------------
# Part 1: masks
# ---------------------------------------------------------------------------


def check_causal_average(causal_average: Callable[[int], torch.Tensor]) -> None:
    """Check ``causal_average`` against the T = 5 matrix of section 1.1."""

    def body() -> str:
        got = _tensor(causal_average(5), "causal_average(5)")
        _shape(got, (5, 5), "causal_average(5)")
        _dtype(got, torch.float32, "causal_average(5)",
               "build it from float32 tensors (torch.ones is float32)")
        expected = torch.tensor([[1, 0, 0, 0, 0],
                                 [1 / 2, 1 / 2, 0, 0, 0],
                                 [1 / 3, 1 / 3, 1 / 3, 0, 0],
                                 [1 / 4, 1 / 4, 1 / 4, 1 / 4, 0],
                                 [1 / 5, 1 / 5, 1 / 5, 1 / 5, 1 / 5]])
        if not _close(got, expected):
            if got.triu(1).abs().sum() > 0:
                hint = "row i may only average columns 0..i; above the diagonal must be 0"
            elif not _close(got.sum(-1), torch.ones(5)):
                hint = _hint("masks.average", "divide row i by its i + 1 entries, so that it sums to 1")
            else:
                hint = _hint("masks.average", "row i holds 1/(i+1) in columns 0..i, itself included")
            raise _Fail("causal_average(5), row by row", expected, got, hint)
        one = _tensor(causal_average(1), "causal_average(1)")
        if not _close(one, torch.ones(1, 1)):
            raise _Fail("causal_average(1)", torch.ones(1, 1), one)
        return "T=5 rows are [1], [1/2]*2, [1/3]*3, [1/4]*4, [1/5]*5, zeros above the diagonal"

    _run("causal_average", body, causal_average)


def check_causal_mask(causal_mask: Callable[..., torch.Tensor]) -> None:
    """Check ``causal_mask`` on square and non-square grids and its device."""

    def body() -> str:
        got = _tensor(causal_mask(4), "causal_mask(4)")
        _shape(got, (4, 4), "causal_mask(4)", "T_k defaults to T_q")
        _dtype(got, torch.bool, "causal_mask(4)", "return a boolean mask (dtype=torch.bool)")
        if not torch.equal(got, _TRIL4):
            if not bool(got.diagonal().all()):
                hint = _hint("masks.itself", "keep the diagonal (tril(-1) or triu(0)?)")
            elif bool(got[0, 1]) and not bool(got[1, 0]):
                hint = _hint("masks.convention", "not True = blocked")
            elif bool(got[0, 1]) and bool(got[1, 0]):
                hint = _hint("masks.off_by_one", "tril(1)?")
            else:
                hint = _hint("masks.transposed", "True where key j <= query i")
            raise _Fail("causal_mask(4)", _TRIL4, got, hint)
        for T_q, T_k in ((2, 4), (4, 2)):
            wide = _tensor(causal_mask(T_q, T_k), f"causal_mask({T_q}, {T_k})")
            expected = _top_left(T_q, T_k)
            if tuple(wide.shape) != (T_q, T_k) or not torch.equal(wide, expected):
                bottom_right = _bool_grid([[j <= i + T_k - T_q for j in range(T_k)]
                                           for i in range(T_q)])
                hint = (_hint("masks.top_left", "query i sees keys 0..i whatever T_k is")
                        if tuple(wide.shape) == (T_q, T_k)
                        and torch.equal(wide, bottom_right) else
                        "the mask has T_q rows (queries) and T_k columns (keys)")
                raise _Fail(f"causal_mask({T_q}, {T_k})", expected, wide, hint)
        on_cpu = causal_mask(3, device="cpu")
        if on_cpu.device.type != "cpu":
            raise _Fail("causal_mask(3, device='cpu').device", "cpu", str(on_cpu.device))
        try:  # a mask created on the requested device fails for a device that does not exist
            ignored = causal_mask(3, device="no-such-device")
        except NotImplementedError:
            raise
        except Exception:
            ignored = None
        if ignored is not None:
            raise _Fail("causal_mask(3, device='no-such-device')", "an error about the device",
                        f"a tensor on {ignored.device}",
                        "create the mask on `device` (pass device= to the factory function)")
        return "square, T_q < T_k and T_q > T_k grids are top-left lower triangles; device= is honoured"

    _run("causal_mask", body, causal_mask)


def check_padding_mask(padding_mask: Callable[[torch.Tensor, int], torch.Tensor]) -> None:
    """Check ``padding_mask`` on lengths [3, 1, 4] with T = 4."""

    def body() -> str:
        lengths = torch.tensor([3, 1, 4])
        before = lengths.clone()
        got = _tensor(padding_mask(lengths, 4), "padding_mask([3, 1, 4], 4)")
        _unchanged(before, lengths, "lengths")
        _shape(got, (3, 4), "padding_mask([3, 1, 4], 4)", "one row per sequence, one column per position")
        _dtype(got, torch.bool, "padding_mask([3, 1, 4], 4)", "return a boolean mask")
        expected = _bool_grid([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]])
        if not torch.equal(got, expected):
            if torch.equal(got, ~expected):
                hint = _hint("masks.convention", "real tokens are True, padding is False")
            elif torch.equal(got, _bool_grid([[1, 1, 1, 1], [1, 1, 0, 0], [1, 1, 1, 1]])):
                hint = _hint("masks.padding_off_by_one", "position p is real when p < length, not <=")
            else:
                hint = "True exactly at positions 0 .. lengths[b] - 1"
            raise _Fail("padding_mask([3, 1, 4], 4)", expected, got, hint)
        return "lengths [3, 1, 4], T=4 give [[1,1,1,0], [1,0,0,0], [1,1,1,1]]; lengths untouched"

    _run("padding_mask", body, padding_mask)


def check_apply_mask(apply_mask: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """Check that blocked entries get softmax weight 0 and allowed ones are kept."""

    def body() -> str:
        scores = torch.randn(2, 4, 4, generator=_gen(1))
        before = scores.clone()
        got = _tensor(apply_mask(scores, _TRIL4), "apply_mask(scores, mask)")
        _unchanged(before, scores, "scores")
        _shape(got, (2, 4, 4), "apply_mask(scores (2, 4, 4), mask (4, 4))")
        allowed = _TRIL4.expand(2, 4, 4)
        if not torch.equal(got[allowed], scores[allowed]):
            if bool(torch.isinf(got[allowed]).any()) or bool((got[allowed] < -1e8).any()):
                hint = _hint("masks.fill_where_false", "~mask: True means may attend")
            elif _close(got, scores + _TRIL4) or _close(got, scores * _TRIL4):
                hint = _hint("masks.arithmetic", "adding or multiplying a boolean mask blocks nothing: masked_fill with -inf")
            else:
                hint = "allowed entries must keep their scores unchanged"
            raise _Fail("allowed entries (mask True) unchanged", scores[allowed][:6],
                        got[allowed][:6], hint)
        weights = torch.softmax(got.double(), dim=-1)
        blocked = weights[~allowed]
        if not bool((blocked == 0).all()):
            if bool((got[~allowed] == 0).all()):
                hint = _hint("masks.fill_zero", "or a huge negative number")
            else:
                hint = _hint("masks.arithmetic", "masked_fill")
            raise _Fail("softmax weight of blocked entries", "all 0", blocked[:6], hint)
        keys = _bool_grid([[1, 1, 1, 0], [1, 1, 0, 0]]).reshape(2, 1, 4)
        padded = apply_mask(scores, keys)
        weights = torch.softmax(padded.double(), dim=-1)
        if not bool((weights[0, :, 3] == 0).all() and (weights[1, :, 2:] == 0).all()):
            raise _Fail("a (2, 1, 4) key mask broadcast over the queries",
                        "weight 0 on the blocked keys", weights[1, 0],
                        "let the mask broadcast against the scores (masked_fill does)")
        return "blocked entries get weight 0 after softmax, allowed scores unchanged, broadcasting works, input untouched"

    _run("apply_mask", body, apply_mask)


def check_combine_masks(combine_masks: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """Check ``combine_masks`` on a 3 x 3 causal mask and lengths [2, 1]."""

    def body() -> str:
        causal = _bool_grid([[1, 0, 0], [1, 1, 0], [1, 1, 1]])
        padding = _bool_grid([[1, 1, 0], [1, 0, 0]])
        got = _tensor(combine_masks(causal, padding), "combine_masks(causal, padding)")
        _shape(got, (2, 1, 3, 3), "combine_masks(causal (3, 3), padding (2, 3))",
               "the result is (B, 1, T, T): one grid per sequence, shared by all heads")
        _dtype(got, torch.bool, "combine_masks(...)", "combine booleans with &")
        expected = torch.stack([_bool_grid([[1, 0, 0], [1, 1, 0], [1, 1, 0]]),
                                _bool_grid([[1, 0, 0], [1, 0, 0], [1, 0, 0]])]).unsqueeze(1)
        if not torch.equal(got, expected):
            on_queries = torch.stack([_bool_grid([[1, 0, 0], [1, 1, 0], [0, 0, 0]]),
                                      _bool_grid([[1, 0, 0], [0, 0, 0], [0, 0, 0]])]).unsqueeze(1)
            if torch.equal(got, on_queries):
                hint = _hint("masks.on_queries", "padding[:, None, None, :]")
            elif torch.equal(got, expected | ~causal) or bool(got.sum() > expected.sum()):
                hint = _hint("masks.and_not_or", "use &, not |")
            else:
                hint = "causal (T, T) becomes (1, 1, T, T), padding (B, T) becomes (B, 1, 1, T)"
            raise _Fail("combine_masks for lengths [2, 1], batch 1", expected[1, 0], got[1, 0]
                        if got.shape == expected.shape else got, hint)
        return "lengths [2, 1] with a 3x3 causal mask give the expected (2, 1, 3, 3) grids; padding hides keys"

    _run("combine_masks", body, combine_masks)


# ---------------------------------------------------------------------------
# Part 2: scaling
# ---------------------------------------------------------------------------


def check_attention_scores(attention_scores: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> None:
    """Check ``attention_scores`` on "the cat sat down" and a batched d=4 case."""

    def body() -> str:
        # d = 4, T_q = 3, T_k = 9: every wrong scale gives a different ratio.
        q = torch.tensor([[[2., 2., 1., -2.], [1., 2., 0., 1.], [0., 1., -1., -1.]],
                          [[-1., 2., 1., -1.], [-1., 1., 2., 1.], [-1., 2., -1., 2.]]])
        k = torch.tensor([[[2., -1., 2., 2.], [2., -2., -1., 0.], [1., -2., -2., -2.],
                           [0., 2., -1., 1.], [1., 1., -1., 2.], [-1., 0., 1., -2.],
                           [0., -1., -2., 2.], [1., -1., -1., -2.], [1., -1., -1., 0.]],
                          [[2., -1., 1., 2.], [-2., -2., 1., 0.], [1., 0., 0., -2.],
                           [-2., -2., 1., -1.], [2., -1., -1., -2.], [0., 2., 2., 1.],
                           [2., 1., 2., 1.], [2., 1., -2., 1.], [0., 1., -2., -1.]]])
        expected = torch.tensor([[[0.0, -0.5, 0.0, 0.5, -0.5, 1.5, -4.0, 1.5, -0.5],
                                  [1.0, -1.0, -2.5, 2.5, 2.5, -1.5, 0.0, -1.5, -0.5],
                                  [-2.5, -0.5, 1.0, 1.0, 0.0, 0.5, -0.5, 1.0, 0.0]],
                                 [[-2.5, -0.5, 0.5, 0.0, -1.5, 2.5, 0.5, -1.5, 0.5],
                                  [0.5, 1.0, -1.5, 0.5, -3.5, 3.5, 2.0, -2.0, -2.0],
                                  [-0.5, -1.5, -2.5, -2.5, -3.5, 2.0, 0.0, 2.0, 1.0]]])
        q_before, k_before = q.clone(), k.clone()
        transpose_hint = _hint("scaling.k_transpose", "transpose only the last two axes of k: k.T reverses every axis")
        try:
            got = _tensor(attention_scores(q, k), "attention_scores(q (2, 3, 4), k (2, 9, 4))")
        except NotImplementedError:
            raise
        except RuntimeError as error:
            raise _Fail("attention_scores(q (2, 3, 4), k (2, 9, 4))", "scores of shape (2, 3, 9)",
                        f"RuntimeError: {str(error)[:70]}", transpose_hint) from None
        _unchanged(q_before, q, "q")
        _unchanged(k_before, k, "k")
        _shape(got, (2, 3, 9), "attention_scores(q (2, 3, 4), k (2, 9, 4))", transpose_hint)
        if not _close(got, expected):
            hint = "the scores are q @ kᵀ / √d with d = q.shape[-1]"
            nonzero = expected.abs() > 0.1
            ratios = got[nonzero] / expected[nonzero]
            ratio = ratios.median().item()
            if bool(torch.allclose(ratios, torch.full_like(ratios, ratio), atol=1e-3)):
                for value, text in ((2.0, _hint("scaling.no_scale", "here √4 = 2")),
                                    (0.5, _hint("scaling.sqrt_d_not_d")),
                                    (4.0, _hint("scaling.divide_not_multiply")),
                                    (2 / 3, _hint("scaling.last_dimension", "not the number of keys (k.shape[-2])")),
                                    (2 / math.sqrt(3), _hint("scaling.last_dimension", "not the number of queries"))):
                    if abs(ratio - value) < 1e-3:
                        hint = text
            raise _Fail("batched scores with d = 4, T_q = 3, T_k = 9 (first row)",
                        expected[0, 0], got[0, 0], hint)
        got = _tensor(attention_scores(_CAT_Q, _CAT_K), "attention_scores(Q, K)")
        expected = _CAT_RAW / math.sqrt(2)
        _shape(got, (4, 4), "attention_scores for 4 queries and 4 keys")
        if not _close(got, expected):
            raise _Fail('"the cat sat down" scores (raw Q Kᵀ is [[1, 0, .5, .5], …], d = 2)',
                        expected, got, "rows are queries: q @ kᵀ / √d")
        try:
            big = attention_scores(torch.randn(2, 3, 5, 8, generator=_gen(2)),
                                   torch.randn(2, 3, 7, 8, generator=_gen(3)))
        except NotImplementedError:
            raise
        except RuntimeError as error:
            raise _Fail("attention_scores(q (2, 3, 5, 8), k (2, 3, 7, 8))", "scores of shape (2, 3, 5, 7)",
                        f"RuntimeError: {str(error)[:70]}", transpose_hint) from None
        _shape(big, (2, 3, 5, 7), "attention_scores(q (2, 3, 5, 8), k (2, 3, 7, 8))", transpose_hint)
        return '"the cat sat down" scores match the table of section 2.1; batched 3-D and 4-D inputs with T ≠ d work'

    _run("attention_scores", body, attention_scores)


def check_attention_weights(attention_weights: Callable[..., torch.Tensor]) -> None:
    """Check ``attention_weights`` on "the cat sat down" and on random masked scores."""

    def body() -> str:
        scores = _CAT_RAW / math.sqrt(2)
        got = _tensor(attention_weights(scores), "attention_weights(scores)")
        if not _close(got, _CAT_WEIGHTS, atol=6e-4, rtol=0):
            if _close(got.sum(-2), torch.ones(4), atol=1e-4):
                hint = _hint("scaling.dim", "the columns sum to 1, the rows don't")
            else:
                hint = "each row is softmax(row of scores)"
            raise _Fail('"the cat sat down" weights, no mask (row "sat")', _CAT_WEIGHTS[2],
                        got[2] if got.shape == (4, 4) else got, hint)
        got = attention_weights(scores, _TRIL4)
        if not _close(got, _CAT_CAUSAL, atol=6e-4, rtol=0):
            raise _Fail('"the cat sat down" weights with the causal mask (row "cat")',
                        _CAT_CAUSAL[1], got[1] if got.shape == (4, 4) else got,
                        "blocked entries must get weight exactly 0 and each row still sums to 1")
        # Random batched scores, non-square causal mask and large values.
        raw = torch.randn(2, 3, 5, 7, generator=_gen(4)) * 30
        before = raw.clone()
        mask = _top_left(5, 7)
        got = _tensor(attention_weights(raw, mask), "attention_weights(scores, mask)")
        _unchanged(before, raw, "scores")
        _shape(got, (2, 3, 5, 7), "attention_weights(scores (2, 3, 5, 7), mask (5, 7))")
        if not bool(torch.isfinite(got).all()):
            raise _Fail("weights for scores of size about ±100", "finite numbers", "NaN or inf",
                        _hint("scaling.max", "a hand-written softmax must (or use torch.softmax)"))
        sums = got.sum(-1)
        if not _close(sums, torch.ones_like(sums), atol=1e-5, rtol=0):
            raise _Fail("row sums of masked weights", "all 1", sums.reshape(-1)[:6],
                        _hint("masks.renormalise"))
        leaked = got[..., ~mask]
        if not bool((leaked == 0).all()):
            raise _Fail("weight on blocked entries", "exactly 0", leaked.abs().max().item(),
                        _hint("masks.fill_zero"))
        return ('"the cat sat down" weights (plain and causal) match the tables of section 2.2; '
                'rows sum to 1, blocked entries are exactly 0')

    _run("attention_weights", body, attention_weights)


def check_scaled_dot_product_attention(scaled_dot_product_attention: Callable[..., Any]) -> None:
    """Compare with ``torch.nn.functional.scaled_dot_product_attention``."""

    def body() -> str:
        q = torch.randn(2, 3, 5, 8, generator=_gen(5))
        k = torch.randn(2, 3, 7, 8, generator=_gen(6))
        v = torch.randn(2, 3, 7, 6, generator=_gen(7))
        originals = [t.clone() for t in (q, k, v)]
        result = scaled_dot_product_attention(q, k, v)
        if not isinstance(result, tuple) or len(result) != 2:
            raise _Fail("return value", "a tuple (output, weights)", type(result).__name__)
        out, weights = result
        for name, before, after in zip("qkv", originals, (q, k, v)):
            _unchanged(before, after, name)
        _shape(_tensor(out, "output"), (2, 3, 5, 6), "output for q (.., 5, 8), k (.., 7, 8), v (.., 7, 6)",
               "output is weights @ v: (..., T_q, d_v)")
        _shape(_tensor(weights, "weights"), (2, 3, 5, 7), "weights", "weights are (..., T_q, T_k)")
        expected = F.scaled_dot_product_attention(q, k, v)
        if not _close(out, expected):
            hint = None
            for scale, text in ((1.0, _hint("scaling.no_scale")), (1 / 8, _hint("scaling.sqrt_d_not_d")),
                                (math.sqrt(8), _hint("scaling.divide_not_multiply")),
                                (1 / math.sqrt(7), _hint("scaling.last_dimension", "q.shape[-1], not the number of keys"))):
                if _close(out, F.scaled_dot_product_attention(q, k, v, scale=scale)):
                    hint = text
            raise _Fail("output without a mask against F.scaled_dot_product_attention",
                        expected[0, 0, 0], out[0, 0, 0], hint)
        if not _close(weights @ v, out):
            raise _Fail("output equals weights @ v", hint="return the weights that were used")
        mask = _top_left(5, 7)
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        if not _close(out, expected):
            raise _Fail("output with a (5, 7) causal mask against F.scaled_dot_product_attention",
                        expected[0, 0, 1], out[0, 0, 1], "pass the mask to the weights (True = may attend)")
        keys = _bool_grid([[1] * 7, [1, 1, 1, 0, 0, 0, 0]]).reshape(2, 1, 1, 7)
        out, _ = scaled_dot_product_attention(q, k, v, mask=keys)
        expected = F.scaled_dot_product_attention(q, k, v, attn_mask=keys)
        if not _close(out, expected):
            raise _Fail("output with a (2, 1, 1, 7) key-padding mask", expected[1, 0, 0],
                        out[1, 0, 0], "the mask must broadcast against (B, H, T_q, T_k)")
        return "matches F.scaled_dot_product_attention with no mask, a causal mask and a padding mask (T_q ≠ T_k ≠ d)"

    _run("scaled_dot_product_attention", body, scaled_dot_product_attention)


def check_dot_product_spread(dot_product_spread: Callable[..., float]) -> None:
    """Check the spread of raw (≈ √d) and scaled (≈ 1) dot products."""

    def body() -> str:
        raw = dot_product_spread(64, 10_000, scaled=False, generator=_gen(8))
        if not isinstance(raw, float):
            raise _Fail("return type of dot_product_spread", "a Python float", type(raw).__name__,
                        "return tensor.item() (or float(...))")
        scaled = dot_product_spread(64, 10_000, scaled=True, generator=_gen(8))
        if not 7.4 < raw < 8.6:
            hint = ("scaled=False must not divide by √d" if 0.9 < raw < 1.1 else
                    _hint("scaling.spread", "each dot product a sum over d products"))
            raise _Fail("spread of raw dot products at d=64 (√64 = 8)", "about 8", raw, hint)
        if not 0.93 < scaled < 1.07:
            hint = ("scaled=True divides each dot product by √d" if 7.4 < scaled < 8.6 else
                    _hint("scaling.sqrt_d_not_d") if 0.1 < scaled < 0.15 else None)
            raise _Fail("spread of scaled dot products at d=64", "about 1", scaled, hint)
        small = dot_product_spread(4, 10_000, scaled=False, generator=_gen(9))
        if not 1.85 < small < 2.15:
            raise _Fail("spread of raw dot products at d=4 (√4 = 2)", "about 2", small)
        again = dot_product_spread(4, 10_000, scaled=False, generator=_gen(9))
        if again != small:
            raise _Fail("same generator seed twice", small, again,
                        "draw every random number from `generator` (torch.randn(..., generator=generator))")
        few = dot_product_spread(16, 500, scaled=True, generator=_gen(10))
        if not 0.8 < few < 1.2:
            raise _Fail("n=500 dot products at d=16, scaled", "about 1", few, "use n, not a fixed count")
        return f"d=64: raw {raw:.2f} (≈ √64 = 8), scaled {scaled:.2f} (≈ 1); d=4: raw {small:.2f} (≈ 2); generator honoured"

    _run("dot_product_spread", body, dot_product_spread)


def check_softmax_entropy(softmax_entropy: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Check entropies of uniform, one-hot and half-half rows."""

    def body() -> str:
        rows = torch.tensor([[1 / 8] * 8,
                             [1.0] + [0.0] * 7,
                             [0.5, 0.5] + [0.0] * 6])
        before = rows.clone()
        got = _tensor(softmax_entropy(rows), "softmax_entropy(rows)")
        _unchanged(before, rows, "weights")
        _shape(got, (3,), "softmax_entropy of 3 rows of 8", "one entropy per row: sum over the last dimension")
        expected = torch.tensor([math.log(8), 0.0, math.log(2)])
        if not bool(torch.isfinite(got).all()):
            raise _Fail("entropy of [1, 0, …, 0] and [0.5, 0.5, 0, …]", expected, got,
                        _hint("scaling.xlogy", "0·log 0 counts as 0"))
        if not _close(got, expected, atol=1e-5):
            hint = ("entropy is -Σ p log p (mind the minus sign)" if _close(got, -expected, atol=1e-5)
                    else "entropy in nats uses the natural log" if _close(got, expected / math.log(2), atol=1e-4)
                    else None)
            raise _Fail("entropies of uniform-over-8, one-hot, half-half (ln 8 = 2.079, 0, ln 2 = 0.693)",
                        expected, got, hint)
        batch = softmax_entropy(torch.softmax(torch.randn(2, 3, 5, generator=_gen(11)), -1))
        _shape(batch, (2, 3), "softmax_entropy of weights (2, 3, 5)")
        return "uniform over 8 keys gives ln 8 = 2.079, one-hot gives 0 (not NaN), half-half gives ln 2"

    _run("softmax_entropy", body, softmax_entropy)


# ---------------------------------------------------------------------------
# Part 3: heads
# ---------------------------------------------------------------------------


def check_split_heads(split_heads: Callable[[torch.Tensor, int], torch.Tensor]) -> None:
    """Check shapes and which features each head receives."""

    def body() -> str:
        x = torch.arange(2 * 3 * 12, dtype=torch.float32).reshape(2, 3, 12)
        before = x.clone()
        got = _tensor(split_heads(x, 4), "split_heads(x (2, 3, 12), 4)")
        _unchanged(before, x, "x")
        _shape(got, (2, 4, 3, 3), "split_heads(x (2, 3, 12), 4)", "the result is (B, H, T, D // H)")
        for b in range(2):
            for h in range(4):
                for t in range(3):
                    if not torch.equal(got[b, h, t], x[b, t, 3 * h:3 * h + 3]):
                        if torch.equal(got, x.reshape(2, 4, 3, 3)):
                            hint = _hint("heads.split_no_transpose")
                        elif torch.equal(got, x.reshape(2, 3, 3, 4).permute(0, 3, 1, 2)):
                            hint = _hint("heads.strided_heads", "(B, T, H, dh), not (B, T, dh, H)")
                        else:
                            hint = "head h holds features h*dh .. (h+1)*dh - 1 of every token"
                        raise _Fail(f"head {h} of token {t} (x holds 0, 1, 2, … in order)",
                                    x[b, t, 3 * h:3 * h + 3], got[b, h, t], hint)
        lesson = split_heads(torch.randn(1, 10, 64, generator=_gen(12)), 4)
        _shape(lesson, (1, 4, 10, 16), "split_heads(x (1, 10, 64), 4)")
        _raises_value_error(lambda: split_heads(torch.zeros(1, 10, 64), 5),
                            "split_heads with d_model=64, n_heads=5",
                            "check d_model % n_heads and raise ValueError naming both")
        return "(1, 10, 64) with 4 heads gives (1, 4, 10, 16); head h holds features h*dh..(h+1)*dh-1; 5 heads of 64 raise ValueError"

    _run("split_heads", body, split_heads)


def check_merge_heads(merge_heads: Callable[[torch.Tensor], torch.Tensor],
                      split_heads: Callable[[torch.Tensor, int], torch.Tensor] | None = None) -> None:
    """Check ``merge_heads`` (and the round trip when ``split_heads`` is given)."""

    def body() -> str:
        x = torch.arange(2 * 4 * 3 * 3, dtype=torch.float32).reshape(2, 4, 3, 3)
        before = x.clone()
        got = _tensor(merge_heads(x), "merge_heads(x (2, 4, 3, 3))")
        _unchanged(before, x, "x")
        _shape(got, (2, 3, 12), "merge_heads(x (2, 4, 3, 3))", "the result is (B, T, H * dh)")
        for b in range(2):
            for t in range(3):
                for h in range(4):
                    if not torch.equal(got[b, t, 3 * h:3 * h + 3], x[b, h, t]):
                        hint = (_hint("heads.merge_no_transpose", "to (B, T, H, dh)")
                                if torch.equal(got, x.reshape(2, 3, 12)) else
                                "features h*dh .. (h+1)*dh - 1 of token t come from head h")
                        raise _Fail(f"features of head {h} in token {t}", x[b, h, t],
                                    got[b, t, 3 * h:3 * h + 3], hint)
        strided = x.transpose(1, 2).contiguous().transpose(1, 2)  # same values, not contiguous
        try:
            again = merge_heads(strided)
        except NotImplementedError:
            raise
        except RuntimeError as error:
            raise _Fail("merge_heads on a non-contiguous tensor (as attention produces)",
                        "it works", f"RuntimeError: {str(error)[:60]}…",
                        _hint("heads.contiguous", ".view needs contiguous memory")) from None
        if not torch.equal(again, got):
            raise _Fail("merge_heads on a non-contiguous tensor", got[0, 0], again[0, 0])
        extra = ""
        if split_heads is not None:
            y = torch.randn(2, 5, 12, generator=_gen(13))
            try:
                heads = split_heads(y, 3)
            except NotImplementedError:
                return ("(2, 4, 3, 3) merges to (2, 3, 12) with head h in features h*dh..(h+1)*dh-1 "
                        "(implement split_heads to check the round trip)")
            back = merge_heads(heads)
            if not torch.equal(back, y):
                raise _Fail("merge_heads(split_heads(x, 3)) == x", y[0, 0], back[0, 0],
                            "merge must undo split exactly (same feature order)")
            extra = "; split → merge is lossless"
        return "(2, 4, 3, 3) merges to (2, 3, 12) with head h in features h*dh..(h+1)*dh-1" + extra

    _run("merge_heads", body, merge_heads)


def check_causal_self_attention(CausalSelfAttention: type) -> None:
    """Check the module's layout, shapes, causality and values.

    The values are compared with ``torch.nn.MultiheadAttention`` loaded with
    the same weights: its input projection is laid out as ``[q | k | v]`` and
    its heads own contiguous blocks, exactly as the contract asks.
    """

    name = getattr(CausalSelfAttention, "__name__", "CausalSelfAttention")

    def body() -> str:
        with torch.random.fork_rng(devices=[]):  # leave the caller's random state alone
            torch.manual_seed(0)
            module = CausalSelfAttention(64, 4)
        if not isinstance(module, nn.Module):
            raise _Fail("CausalSelfAttention(64, 4) is a torch.nn.Module", "nn.Module",
                        type(module).__name__, "subclass nn.Module and call super().__init__()")
        for attr, shape in (("qkv", (192, 64)), ("proj", (64, 64))):
            layer = getattr(module, attr, None)
            if not isinstance(layer, nn.Linear):
                raise _Fail(f"self.{attr} is an nn.Linear", "nn.Linear", type(layer).__name__,
                            "one qkv = nn.Linear(d_model, 3 * d_model) and proj = nn.Linear(d_model, d_model)")
            if tuple(layer.weight.shape) != shape or layer.bias is None:
                raise _Fail(f"self.{attr} weight shape and bias", f"{shape} with a bias",
                            f"{tuple(layer.weight.shape)}" + (" without a bias" if layer.bias is None else ""),
                            "nn.Linear(d_model, 3 * d_model) and nn.Linear(d_model, d_model), with their default bias")
        names = [name for name, _ in module.named_parameters()]
        if sorted(names) != ["proj.bias", "proj.weight", "qkv.bias", "qkv.weight"]:
            count = sum(p.numel() for p in module.parameters())
            raise _Fail(f"the module's parameters ({count:,} numbers; 16,640 expected at d_model=64)",
                        "qkv.weight, qkv.bias, proj.weight, proj.bias", ", ".join(names) or "none",
                        "only self.qkv and self.proj hold parameters: no separate q/k/v layers, no extra "
                        "layers (a causal mask registered as a buffer, or a dropout layer, is fine)")
        x = torch.randn(2, 12, 64, generator=_gen(14))
        before = x.clone()
        result = module(x)
        _unchanged(before, x, "x")
        if not isinstance(result, tuple) or len(result) != 2:
            raise _Fail("forward returns", "a tuple (output, weights)", type(result).__name__)
        out, weights = result
        _shape(_tensor(out, "output"), (2, 12, 64), "output for x (2, 12, 64)")
        _shape(_tensor(weights, "weights"), (2, 4, 12, 12), "weights for x (2, 12, 64) and 4 heads")
        sums = weights.sum(-1)
        if not _close(sums, torch.ones_like(sums), atol=1e-5, rtol=0):
            raise _Fail("weight rows sum to 1", "all 1", sums.reshape(-1)[:6])
        above = weights.triu(1).abs().max().item()
        if above != 0:
            raise _Fail("weight above the diagonal", 0.0, above, "apply a causal mask before the softmax")
        changed = x.clone()
        changed[:, 8:] = torch.randn(2, 4, 64, generator=_gen(15))
        out2, _ = module(changed)
        leak = (out2[:, :8] - out[:, :8]).abs().max().item()
        if leak > 1e-6:
            raise _Fail("outputs at positions 0..7 when only tokens 8..11 change", "no change",
                        f"max change {leak:.3g}",
                        "split heads as view (B, T, H, dh) then transpose(1, 2), and transpose back before merging")
        # Compare with PyTorch's MultiheadAttention, with large weights so that
        # the choice of scale (d_head, not d_model) is visible.
        with torch.no_grad():
            module.qkv.weight.mul_(4.0)
            oracle = nn.MultiheadAttention(64, 4, batch_first=True)
            oracle.in_proj_weight.copy_(module.qkv.weight)
            oracle.in_proj_bias.copy_(module.qkv.bias)
            oracle.out_proj.weight.copy_(module.proj.weight)
            oracle.out_proj.bias.copy_(module.proj.bias)
            blocked = ~_top_left(12, 12)  # MultiheadAttention uses True = blocked
            expected, expected_w = oracle(x, x, x, attn_mask=blocked, need_weights=True,
                                          average_attn_weights=False)
            out, weights = module(x)
        if not _close(weights, expected_w, atol=1e-5):
            raise _Fail("weights against nn.MultiheadAttention with the same parameters (head 0, query 2)",
                        expected_w[0, 0, 2, :3], weights[0, 0, 2, :3],
                        "split qkv as [q | k | v], each d_model wide; split each into heads as split_heads "
                        "does; scale by √d_head (not √d_model)")
        if not _close(out, expected, atol=1e-4):
            raise _Fail("output against nn.MultiheadAttention with the same parameters (weights agree)",
                        expected[0, 1, :4], out[0, 1, :4],
                        "use the v block of qkv, merge the heads as merge_heads does, then apply self.proj")
        _raises_value_error(lambda: CausalSelfAttention(64, 5), "CausalSelfAttention(64, 5)",
                            "check d_model % n_heads in __init__ and raise ValueError")
        return ("16,640 parameters; (2, 12, 64) in and out, weights (2, 4, 12, 12); causal; "
                "matches nn.MultiheadAttention with the same weights")

    _run(name, body, CausalSelfAttention)


check_CausalSelfAttention = check_causal_self_attention


# ---------------------------------------------------------------------------
# Part 4: positions
# ---------------------------------------------------------------------------


def check_sinusoidal_encoding(sinusoidal_encoding: Callable[..., torch.Tensor]) -> None:
    """Check the interleaved sinusoidal encoding at a few hand-computed entries."""

    def body() -> str:
        pe = _tensor(sinusoidal_encoding(64, 64), "sinusoidal_encoding(64, 64)")
        _shape(pe, (64, 64), "sinusoidal_encoding(64, 64)", "rows are positions, columns are dimensions")
        _dtype(pe, torch.float32, "sinusoidal_encoding(64, 64)",
               "compute the angles in float64 if you like, then return .float()")
        first = torch.tensor([0.0, 1.0] * 32)
        if not _close(pe[0], first, atol=1e-6):
            if _close(pe[0], torch.tensor([1.0, 0.0] * 32), atol=1e-6):
                hint = _hint("positions.sin_even", "sin and cos are swapped")
            elif _close(pe[0], torch.tensor([0.0] * 32 + [1.0] * 32), atol=1e-6):
                hint = _hint("positions.interleaves", "sin at PE[p, 2i], cos at PE[p, 2i+1]; not [sin… | cos…]")
            elif abs(pe[0, 0].item() - math.sin(1)) < 1e-5:
                hint = _hint("positions.from_zero")
            else:
                hint = None
            raise _Fail("PE[0] (position 0)", first, pe[0], hint)
        checks = [((1, 0), math.sin(1), "positions start at 0; even columns are sin"),
                  ((1, 1), math.cos(1), "odd columns are cos"),
                  ((10, 2), 0.937632744137416, "frequencies go by pairs: exponent 2i/d_model"),
                  ((10, 3), 0.3476274401156199, "column 2i+1 uses the same angle as column 2i"),
                  ((63, 30), 0.744722210597502, "angle p / base^(2i/d_model)"),
                  ((50, 62), 0.006667557757307569, "the denominator is d_model, not d_model/2 - 1"),
                  ((50, 63), 0.9999777715897253, "the denominator is d_model, not d_model/2 - 1")]
        for (p, c), value, hint in checks:
            got = pe[p, c].item()
            if abs(got - value) > 1e-5:
                raise _Fail(f"PE[{p}, {c}] for T=64, d_model=64", value, got, hint)
        small = sinusoidal_encoding(4, 4, base=100.0)
        if abs(small[1, 2].item() - math.sin(0.1)) > 1e-6:
            raise _Fail("PE[1, 2] with base=100, d_model=4 (sin(1/100^(2/4)) = sin 0.1)",
                        math.sin(0.1), small[1, 2].item(), "use the `base` argument")
        far = sinusoidal_encoding(2048, 8)
        if abs(far[2047, 2].item() - (-0.4763313007198396)) > 1e-3:
            raise _Fail("PE[2047, 2] for d_model=8 (sin 204.7)", -0.4763313007198396, far[2047, 2].item(),
                        "precision loss: compute the angles in float32 or better (float64 is safest)")
        _raises_value_error(lambda: sinusoidal_encoding(8, 7), "sinusoidal_encoding(8, 7)",
                            "an odd d_model cannot be split into sin/cos pairs: raise ValueError")
        return "PE[0] = [0, 1, 0, 1, …]; hand-computed entries match at positions 1, 10, 50, 63 and 2047; odd d_model raises ValueError"

    _run("sinusoidal_encoding", body, sinusoidal_encoding)


def check_position_similarity(position_similarity: Callable[[torch.Tensor], torch.Tensor],
                              sinusoidal_encoding: Callable[..., torch.Tensor] | None = None) -> None:
    """Check cosine similarities; with ``sinusoidal_encoding``, the figures of section 4.2 too."""

    def body() -> str:
        pe = torch.randn(6, 5, generator=_gen(16)) * 3
        before = pe.clone()
        got = _tensor(position_similarity(pe), "position_similarity(pe (6, 5))")
        _unchanged(before, pe, "pe")
        _shape(got, (6, 6), "position_similarity(pe (6, 5))", "one row and one column per position")
        expected = F.cosine_similarity(pe[:, None, :], pe[None, :, :], dim=-1)
        if not _close(got, expected, atol=1e-5):
            hint = (_hint("positions.cosine", "normalise each row first")
                    if not _close(got.diagonal(), torch.ones(6), atol=1e-4) else None)
            raise _Fail("cosine similarities of random vectors (row 0)", expected[0], got[0], hint)
        if sinusoidal_encoding is None:
            return "matches the cosine similarity of every pair; diagonal is 1"
        try:
            sims = position_similarity(sinusoidal_encoding(64, 64))
        except NotImplementedError:
            return ("matches the cosine similarity of every pair; diagonal is 1 "
                    "(implement sinusoidal_encoding to check the figures of section 4.2)")
        positions = [10, 11, 15, 30, 60]
        figures = torch.tensor([1.0, 0.966, 0.734, 0.59, 0.49])
        row = sims[10, positions]
        if not _close(row, figures, atol=6e-3, rtol=0):
            raise _Fail("similarity of position 10 with 10, 11, 15, 30, 60 (64 x 64 encoding)",
                        figures, row, "check sinusoidal_encoding first")
        return "cosine similarity of every pair; position 10 vs 10, 11, 15, 30, 60 = " + _fmt(row)

    _run("position_similarity", body, position_similarity)


def check_add_positions(add_positions: Callable[[torch.Tensor], torch.Tensor]) -> None:
    """Check that the encoding is added to every sequence, keeping dtype and input."""

    def body() -> str:
        zeros = torch.zeros(2, 5, 8)
        got = _tensor(add_positions(zeros), "add_positions(zeros (2, 5, 8))")
        _shape(got, (2, 5, 8), "add_positions(x (2, 5, 8))")
        expected_rows = {(0, 0): 0.0, (0, 1): 1.0, (1, 0): math.sin(1), (1, 1): math.cos(1),
                         (3, 2): math.sin(0.3), (3, 3): math.cos(0.3)}
        for (p, c), value in expected_rows.items():
            for b in range(2):
                if abs(got[b, p, c].item() - value) > 1e-5:
                    raise _Fail(f"add_positions(zeros)[{b}, {p}, {c}]", value, got[b, p, c].item(),
                                "add sinusoidal_encoding(T, D) to every sequence in the batch")
        x = torch.randn(2, 5, 8, generator=_gen(17), dtype=torch.float64)
        before = x.clone()
        out = add_positions(x)
        _unchanged(before, x, "x")
        _dtype(out, torch.float64, "add_positions(float64 x)", "convert the encoding to x's dtype and device")
        if not _close(out - x, got[0].double().expand(2, 5, 8), atol=1e-6):
            raise _Fail("add_positions(x) - x equals the encoding", got[0, 1], (out - x)[0, 1])
        return "adds the (T, D) encoding to every sequence; keeps x's dtype; x untouched"

    _run("add_positions", body, add_positions)


def check_is_permutation_equivariant(is_permutation_equivariant: Callable[..., bool]) -> None:
    """Check the test on functions that are and are not permutation-equivariant."""

    def body() -> str:
        x = torch.randn(2, 5, 4, generator=_gen(18))
        before = x.clone()
        perm = torch.tensor([3, 0, 4, 1, 2])
        cases = [("elementwise 2x + 1", lambda t: 2 * t + 1, True),
                 ("attention without a mask", lambda t: F.scaled_dot_product_attention(t, t, t), True),
                 ("running sum over tokens", lambda t: t.cumsum(1), False),
                 ("causal attention", lambda t: F.scaled_dot_product_attention(t, t, t, is_causal=True), False),
                 ("adding a position ramp", lambda t: t + torch.arange(5.0).reshape(1, 5, 1), False)]
        for label, fn, expected in cases:
            got = is_permutation_equivariant(fn, x, perm)
            if not isinstance(got, bool):
                raise _Fail(f"return type for {label}", "a Python bool", type(got).__name__,
                            "wrap the comparison in bool(...)")
            if got != expected:
                hint = ("compare fn(x[:, perm]) with fn(x)[:, perm]: permute the token axis (dim 1)"
                        if expected else "compare the two results, don't just check shapes")
                raise _Fail(f"is_permutation_equivariant({label})", expected, got, hint)
        _unchanged(before, x, "x")
        return "True for elementwise maps and unmasked attention; False for a running sum, causal attention and added positions"

    _run("is_permutation_equivariant", body, is_permutation_equivariant)


# ---------------------------------------------------------------------------
# Part 5: timing
# ---------------------------------------------------------------------------


def check_score_grid_bytes(score_grid_bytes: Callable[..., int]) -> None:
    """Check byte counts against the figures of section 5.1."""

    def body() -> str:
        figures = {64: 16_384, 1_024: 4_194_304, 8_192: 268_435_456, 131_072: 68_719_476_736}
        for T, expected in figures.items():
            got = score_grid_bytes(T)
            if not isinstance(got, int) or isinstance(got, bool):
                raise _Fail(f"return type of score_grid_bytes({T})", "a Python int", type(got).__name__,
                            "return an int (use int(...) if you computed a tensor or float)")
            if got != expected:
                hint = ("float32 takes 4 bytes per entry" if got * 2 == expected else
                        "the grid has T × T entries" if got == T * 4 else _hint("timing.grid_bytes"))
                raise _Fail(f"score_grid_bytes({T}) (float32, 1 head, batch 1)", expected, got, hint)
        got = score_grid_bytes(64, n_heads=4, batch=2, dtype=torch.float16)
        if got != 65_536:
            raise _Fail("score_grid_bytes(64, n_heads=4, batch=2, dtype=float16)", 65_536, got,
                        "multiply by heads and batch, and use the dtype's item size (float16: 2 bytes)")
        got = score_grid_bytes(10, dtype=torch.float64)
        if got != 800:
            raise _Fail("score_grid_bytes(10, dtype=float64)", 800, got, "item size of float64 is 8 bytes")
        return "16 KiB at T=64, 4 MiB at 1,024, 256 MiB at 8,192, 64 GiB at 131,072; heads, batch and dtype count"

    _run("score_grid_bytes", body, score_grid_bytes)


class _Workload:
    """A callable whose calls sleep for given durations and record their arguments."""

    def __init__(self, durations: list[float]) -> None:
        self.durations = durations
        self.calls: list[tuple] = []

    def __call__(self, *args: Any) -> None:
        index = len(self.calls)
        self.calls.append(args)
        time.sleep(self.durations[index] if index < len(self.durations) else self.durations[-1])


def check_time_call(time_call: Callable[..., float]) -> None:
    """Check ``time_call`` on a synthetic workload with a slow first call and an outlier."""

    def body() -> str:
        fast, slow = 0.004, 0.1
        first = _Workload([slow, fast])  # a slow first call, then one timed call
        got = time_call(first, repeats=1, warmup=1)
        if len(first.calls) != 2:
            raise _Fail("number of calls with repeats=1, warmup=1", 2, len(first.calls),
                        "call fn warmup times untimed, then repeats times timed")
        if isinstance(got, (int, float)) and not 0.0035 < got < 0.04:
            hint = (_hint("timing.units", "not milliseconds") if got > 1.0 else
                    "the warm-up calls must not be timed" if got > 0.04 else None)
            raise _Fail("time of 1 call of 4 ms after a warm-up call of 100 ms", f"≈ {fast} s", got, hint)
        work = _Workload([fast, fast, fast, slow, fast, fast])  # warm-up, then 5 timed calls
        got = time_call(work, "a", 2, repeats=5, warmup=1)
        if not isinstance(got, float):
            raise _Fail("return type of time_call", "a float (seconds)", type(got).__name__)
        if len(work.calls) != 6:
            raise _Fail("number of calls with repeats=5, warmup=1", 6, len(work.calls),
                        "call fn warmup times untimed, then repeats times timed")
        if any(args != ("a", 2) for args in work.calls):
            raise _Fail("arguments passed to fn", ("a", 2), work.calls[0], "call fn(*args)")
        if not 0.0035 < got < 0.015:
            mean_all = (slow + fast * 5) / 6
            mean_timed = (slow + fast * 4) / 5
            if got > 1.0:
                hint = _hint("timing.units", "not milliseconds")
            elif abs(got - mean_timed) < 0.006:
                hint = _hint("timing.median", "not the mean")
            elif abs(got - mean_all) < 0.006 or got > 0.09:
                hint = _hint("timing.warmup")
            else:
                hint = "return the median wall-clock time of one call"
            raise _Fail("median time of 5 calls of 4 ms, one of which takes 100 ms",
                        f"≈ {fast} s", got, hint)
        counted = _Workload([0.0])
        time_call(counted, repeats=3, warmup=2)
        if len(counted.calls) != 5:
            raise _Fail("number of calls with repeats=3, warmup=2", 5, len(counted.calls))
        return (f"{got * 1000:.1f} ms for 4 ms calls: a slow warm-up call is excluded, the median ignores a 100 ms outlier"
                + ("" if torch.cuda.is_available() else "; (synchronising is only testable on a GPU)"))

    _run("time_call", body, time_call)


def check_time_attention(time_attention: Callable[..., list]) -> None:
    """Check ``time_attention`` with a fake attention whose cost grows as T²."""

    def body() -> str:
        seen: list[tuple] = []
        took: list[float] = []  # each call's own duration, by this check's clock

        def fake_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
            seen.append((tuple(q.shape), tuple(k.shape), tuple(v.shape), q.device.type,
                         q.dtype, float(q.std()), q is k or torch.equal(q, k)))
            start = time.perf_counter()
            time.sleep(q.shape[1] ** 2 * 2e-5)  # 8 ms and 72 ms, or longer on a busy machine
            took.append(time.perf_counter() - start)
            return q

        got = time_attention(fake_attention, [20, 60], d_head=16, repeats=2)
        if not isinstance(got, list) or len(got) != 2:
            raise _Fail("time_attention(attn, [20, 60]) returns", "a list of 2 floats",
                        f"{type(got).__name__} of length {len(got) if hasattr(got, '__len__') else '?'}")
        if not all(isinstance(t, float) for t in got):
            raise _Fail("entries of the returned list", "floats", [type(t).__name__ for t in got])
        if len(seen) != 6:
            raise _Fail("calls of attn for 2 lengths with repeats=2", "6 (1 warm-up + 2 timed, per T)", len(seen),
                        "time each T with time_call(attn, q, k, v, repeats=repeats)")
        for T, call in zip((20, 20, 20, 60, 60, 60), seen):
            q_shape, k_shape, v_shape, device, dtype, std, same = call
            if (q_shape, k_shape, v_shape) != ((1, T, 16),) * 3:
                raise _Fail(f"shapes of q, k, v for T={T}, d_head=16", "(1, T, 16) each",
                            f"{q_shape}, {k_shape}, {v_shape}")
            if device != "cpu" or dtype != torch.float32:
                raise _Fail("device and dtype of q", "cpu float32", f"{device} {dtype}")
            if not 0.5 < std < 1.5 or same:
                raise _Fail("q, k, v are independent standard-normal tensors", "torch.randn each",
                            f"std {std:.2f}" + (", q equals k" if same else ""))
        # what the timed calls (the last two of each T) took by this check's clock: a busy machine stretches
        # the short ones most, so the ratio to expect is the one measured, not 9
        measured = statistics.median(took[4:6]) / max(statistics.median(took[1:3]), 1e-12)
        ratio = got[1] / max(got[0], 1e-12)
        if not (ratio > 1 and ratio > measured / 2):
            raise _Fail("time for T=60 against T=20 (the fake cost grows as T²)",
                        f"about {measured:.1f}× (what its calls took)", f"{ratio:.2f}×",
                        "return the times in the order of Ts")
        return "fresh (1, T, d_head) inputs per T, timed with time_call; times follow the order of Ts"

    _run("time_attention", body, time_attention)


def check_fit_power_law(fit_power_law: Callable[[Any, Any], float]) -> None:
    """Check the log-log slope on exact and noisy power laws."""

    def body() -> str:
        Ts = [128, 256, 512, 1024]
        got = fit_power_law(Ts, [1e-9 * T ** 2 for T in Ts])
        if not isinstance(got, float):
            raise _Fail("return type of fit_power_law", "a Python float", type(got).__name__)
        if abs(got - 2.0) > 1e-6:
            hint = (_hint("timing.log_log", "not time against T") if abs(got) < 1e-3 else
                    "least-squares slope: Σ(x - x̄)(y - ȳ) / Σ(x - x̄)² with x = log T, y = log time")
            raise _Fail("slope for times = 1e-9 · T²", 2.0, got, hint)
        got = fit_power_law(Ts, [5e-7 * T ** 1.5 for T in Ts])
        if abs(got - 1.5) > 1e-6:
            raise _Fail("slope for times = 5e-7 · T^1.5", 1.5, got)
        noisy = [1e-9 * T ** 2 * f for T, f in zip(Ts, [1.1, 0.9, 1.05, 0.95])]
        got = fit_power_law(Ts, noisy)
        if abs(got - 1.9587880105755309) > 1e-6:
            raise _Fail("least-squares slope for T² times with ±10% noise", 1.9587880105755309, got,
                        "fit a least-squares line through all points, not just the first and last")
        return "slopes 2 and 1.5 for exact power laws, 1.959 for a noisy T² (least squares on log-log)"

    _run("fit_power_law", body, fit_power_law)


# ---------------------------------------------------------------------------
# Part 6: tiles
# ---------------------------------------------------------------------------


def _whole_row_state(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                     mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The softmax state (m, l, o) of a set of keys, worked out with the whole row at once, in float64."""
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.amax(dim=-1)
    shift = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    l = torch.exp(scores - shift[..., None]).sum(dim=-1)
    o = torch.nan_to_num(torch.softmax(scores, dim=-1)) @ v.double()  # a row with no key: 0
    return m, l, o


def _empty_state(m: torch.Tensor, o: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.full_like(m, float("-inf")), torch.zeros_like(m), torch.zeros_like(o)


def _state_of(result: Any, what: str, m_shape: tuple, d_v: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        raise _Fail(f"{what} returns", "a tuple (m, l, o)", type(result).__name__, "return m, l, o")
    m, l, o = (_tensor(part, f"{what}: {name}") for part, name in zip(result, "mlo"))
    _shape(m, m_shape, f"{what}: m", "m has one entry per query: (..., T_q)")
    _shape(l, m_shape, f"{what}: l", "l has one entry per query: (..., T_q)")
    _shape(o, (*m_shape, d_v), f"{what}: o", "o is an output per query: (..., T_q, d_v)")
    return m, l, o


def _no_nan(state: tuple[torch.Tensor, ...], what: str) -> None:
    for name, part in zip("mlo", state):
        if bool(part.isnan().any()):
            raise _Fail(f"{what}: {name}", "no NaN", f"{int(part.isnan().sum())} NaN entries",
                        "an empty row has m = -inf: subtract 0 there, not m (-inf - -inf is NaN), "
                        "and divide by l only where l > 0")


def _same_state(got: tuple[torch.Tensor, ...], want: tuple[torch.Tensor, ...], what: str,
                hints: tuple[str | None, str | None, str | None] = (None, None, None), atol: float = 1e-5) -> None:
    _no_nan(got, what)
    for name, g, w, hint in zip("mlo", got, want, hints):
        if not torch.equal(g.isneginf(), w.isneginf()):
            raise _Fail(f"{what}: where {name} is -inf", w, g, "a row that sees no key has m = -inf, l = 0, o = 0")
        finite = ~w.isneginf()
        if not _close(g[finite], w[finite], atol=atol):
            raise _Fail(f"{what}: {name}", w, g, hint)


def check_block_state(block_state: Callable[..., Any]) -> None:
    """Check ``block_state`` on the lesson's sentence, on random masked inputs and on a fully masked row."""

    def body() -> str:
        # "sat" against the block of keys "the" and "cat"; one-hot values, so o shows the weights
        got = _state_of(block_state(_CAT_Q[2:3], _CAT_K[:2], torch.eye(2)), 'block_state("sat"; "the", "cat")', (1,), 2)
        m, l, o = got
        if abs(float(m[0]) - 4.0) < 1e-4:
            raise _Fail('m for "sat" against "the" and "cat" (raw scores 0 and 4)', 2.8284, m,
                        "scale the scores by 1/√d (d = 2 here): m = 4 / √2")
        want = (torch.tensor([2.8284271]), torch.tensor([1.0591057]), torch.tensor([[0.0558072, 0.9441928]]))
        if _close(o, want[2] * want[1][:, None], atol=1e-4):
            raise _Fail('o for "sat" against "the" and "cat"', want[2], o,
                        "o is normalised: divide the sum of exp(s - m) · v by l")
        _same_state(got, want, 'block_state("sat"; "the", "cat")',
                    ("m is the largest scaled score of the row", "l is the sum of exp(score - m) over the block",
                     "o = Σ exp(score - m) · v / l"), atol=1e-4)
        q = torch.randn(2, 3, 5, 8, generator=_gen(30))
        k = torch.randn(2, 3, 7, 8, generator=_gen(31))
        v = torch.randn(2, 3, 7, 6, generator=_gen(32))
        mask = torch.rand(5, 7, generator=_gen(33)) < 0.6
        mask[:, 0] = True
        mask[3] = False  # query 3 sees no key of this block
        originals = [t.clone() for t in (q, k, v)]
        got = _state_of(block_state(q, k, v, mask), "block_state(q (2, 3, 5, 8), k (.., 7, 8), v (.., 7, 6), mask (5, 7))",
                        (2, 3, 5), 6)
        for name, before, after in zip("qkv", originals, (q, k, v)):
            _unchanged(before, after, name)
        want = _whole_row_state(q, k, v, mask)
        _same_state(got, want, "block_state with a mask where query 3 sees no key",
                    ("m is the row max of the masked, scaled scores (blocked scores are -inf)",
                     "l sums exp(score - m) over the allowed keys",
                     "o is the attention output over the block's keys alone"))
        return ('"sat" against "the" and "cat": m = 2.828, l = 1.059, o = [0.056, 0.944]; batched and masked '
                "states match; a row with no key gives m = -inf, l = 0, o = 0")

    _run("block_state", body, block_state)


def check_merge_states(merge_states: Callable[..., Any]) -> None:
    """Check ``merge_states`` on the worked example of section 6.3, on random blocks and with empty states."""

    def body() -> str:
        e = math.exp
        a = (torch.tensor([3.0], dtype=torch.float64), torch.tensor([1 + e(-2)], dtype=torch.float64),
             torch.tensor([[(10 * e(-2) + 20) / (1 + e(-2))]], dtype=torch.float64))
        b = (torch.tensor([2.0], dtype=torch.float64), torch.tensor([1.0], dtype=torch.float64),
             torch.tensor([[30.0]], dtype=torch.float64))
        got = _state_of(merge_states(a, b), "merge_states(A, B) of section 6.3", (1,), 1)
        if abs(float(got[0][0]) - 3.0) > 1e-9:
            raise _Fail("merged m of the worked example", 3.0, got[0], "the merged max is the larger of the two")
        if abs(float(got[1][0]) - (2 + e(-2))) < 1e-6:
            raise _Fail("merged l of the worked example", 1.5032, got[1],
                        "rescale each sum to the common max: l_A·exp(m_A - m) + l_B·exp(m_B - m)")
        want = (torch.tensor([3.0]), torch.tensor([1.5032147]), torch.tensor([[21.546979]]))
        _same_state(got, want, "merge_states(A, B) of section 6.3",
                    (None, "l = l_A·exp(m_A - m) + l_B·exp(m_B - m)",
                     "o = (w_A·o_A + w_B·o_B) / l with w = l·exp(m_side - m): each o is normalised"), atol=1e-4)
        q = torch.randn(2, 4, 8, generator=_gen(34))
        k = torch.randn(2, 9, 8, generator=_gen(35))
        v = torch.randn(2, 9, 3, generator=_gen(36))
        k[:, 5:] *= 3  # the second block has the larger scores in most rows
        first, second = _whole_row_state(q, k[:, :5], v[:, :5]), _whole_row_state(q, k[:, 5:], v[:, 5:])
        whole = _whole_row_state(q, k, v)
        for x, y, label in ((first, second, "(first, second)"), (second, first, "(second, first)")):
            merged = _state_of(merge_states(x, y), f"merge_states{label}", (2, 4), 3)
            _same_state(merged, whole, f"merge_states{label} of keys 0..4 and 5..8 against all 9 keys",
                        (_hint("tiles.running_max", "the merged max is the larger of the two"),
                         _hint("tiles.rescale"),
                         "weight each (normalised) o by l·exp(m_side - m), then divide by the merged l"))
        empty = _empty_state(first[0], first[2])
        for x, y, label, want in ((first, empty, "(state, empty)", first), (empty, first, "(empty, state)", first),
                                  (empty, empty, "(empty, empty)", empty)):
            merged = _state_of(merge_states(x, y), f"merge_states{label}", (2, 4), 3)
            _same_state(merged, want, f"merge_states{label} (empty: m = -inf, l = 0, o = 0)")
        return ("the worked example gives m = 3, l = 1.503, o = 21.55; two blocks merge into all their keys "
                "in either order; an empty state changes nothing")

    _run("merge_states", body, merge_states)


def _worst_row(got: torch.Tensor, want: torch.Tensor) -> tuple[int, ...]:
    """The index (all but the last axis) of the output row farthest from `want`."""
    gaps = (got.double() - want.double()).abs().nan_to_num(nan=math.inf).amax(dim=-1)
    flat = int(gaps.reshape(-1).argmax())
    index = []
    for size in reversed(gaps.shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


def check_tiled_attention(tiled_attention: Callable[..., torch.Tensor]) -> None:
    """Compare ``tiled_attention`` with ``F.scaled_dot_product_attention``, full and causal."""

    def body() -> str:
        q = torch.randn(2, 3, 6, 8, generator=_gen(37))
        k = torch.randn(2, 3, 11, 8, generator=_gen(38))
        v = torch.randn(2, 3, 11, 5, generator=_gen(39))
        originals = [t.clone() for t in (q, k, v)]
        want = F.scaled_dot_product_attention(q, k, v)
        for block_size in (4, 11, 1, 20):
            got = _tensor(tiled_attention(q, k, v, block_size), f"tiled_attention(..., block_size={block_size})")
            _shape(got, (2, 3, 6, 5), f"tiled_attention(q (.., 6, 8), k (.., 11, 8), v (.., 11, 5), {block_size})",
                   "the output is (..., T_q, d_v)")
            if not _close(got, want):
                hint = None
                if block_size == 4 and _close(got, F.scaled_dot_product_attention(q, k[..., :8, :], v[..., :8, :])):
                    hint = _hint("tiles.last_block", "11 keys in blocks of 4 are 4 + 4 + 3")
                index = _worst_row(got, want)
                raise _Fail(f"tiled_attention with block_size={block_size} (11 keys) against "
                            f"F.scaled_dot_product_attention, output row {list(index)}", want[index], got[index], hint)
        for name, before, after in zip("qkv", originals, (q, k, v)):
            _unchanged(before, after, name)
        for T_q, T_k in ((6, 11), (9, 4)):
            q = torch.randn(2, 3, T_q, 8, generator=_gen(40))
            k = torch.randn(2, 3, T_k, 8, generator=_gen(41))
            v = torch.randn(2, 3, T_k, 5, generator=_gen(42))
            got = _tensor(tiled_attention(q, k, v, 5, causal=True), "tiled_attention(..., causal=True)")
            if bool(got.isnan().any()):
                raise _Fail(f"causal tiled_attention, T_q = {T_q}, T_k = {T_k}, blocks of 5", "no NaN", "NaN",
                            "early queries see no key of a later block: that block's state for them is empty "
                            "(m = -inf, l = 0, o = 0), which must not make NaN")
            want = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            if not _close(got, want):
                rows = [i for i in range(T_q) if not _close(got[..., i, :], want[..., i, :])]
                raise _Fail(f"causal tiled_attention, T_q = {T_q}, T_k = {T_k}, blocks of 5, against "
                            "F.scaled_dot_product_attention(..., is_causal=True)", "every row equal", f"rows {rows} differ",
                            "query i sees keys 0..i (top-left); a block is skipped only when its first key "
                            "comes after the last query (the block starting at key 5 is needed when T_q = 6)")
        _raises_value_error(lambda: tiled_attention(q, k, v, 0), "tiled_attention(q, k, v, block_size=0)",
                            "check block_size and raise ValueError when it is below 1")
        return ("equals F.scaled_dot_product_attention for blocks of 4, 11, 1 and 20 of 11 keys, "
                "and causal for T_q < T_k and T_q > T_k; block_size=0 raises ValueError; "
                + _memory_verdict(tiled_attention))

    _run("tiled_attention", body, tiled_attention)


# The graded memory check of tiled_attention (autograder/graders/test_tiles.py), measured as the grader
# measures it (docs/measured-checks.md): every page the call touches for the first time, by the kernel's count
# of page faults, whether it is new memory or memory kept from the module's import or from an earlier call, plus
# what its process held privately when the call began and the bytes it wrote through system calls. The call runs
# in a process forked, after a warm-up call on two blocks of keys (so that what PyTorch imports or sets up on its
# first use does not count), from the process that made the warm-up; its heap keeps what it frees, so a block
# allocated and freed again is counted once.
MEMORY_T, MEMORY_D, MEMORY_BLOCK, MEMORY_HELD = 3072, 8, 16, 20 * 2**20


def _byte_size(n: int) -> str:
    """``n`` bytes as ``512 B``, ``1.5 KiB``, ``384 KiB``, ``9.0 MiB`` or ``22 MiB``, to within 5%: never a 0
    for a size that is not 0 (as autograder/text.py's byte_size, which the grader's check uses)."""
    if n < 1024:
        return f"{n:,} B"
    for power, unit in enumerate(("KiB", "MiB", "GiB"), start=1):
        value = n / 1024**power
        if value < 1023.5 or unit == "GiB":  # from 1023.5 on, the next unit up (1.0) reads better than 1024
            return (f"{value:.1f}" if value < 9.95 else f"{value:,.0f}") + f" {unit}"


def _memory_verdict(tiled_attention: Callable[..., torch.Tensor]) -> str:
    """What ``tiled_attention`` uses at T = 3,072: the end of the ✔ line; raises _Fail over the bound."""
    q, k, v = (torch.randn(1, MEMORY_T, MEMORY_D, generator=_gen(43 + i)) for i in range(3))
    used = _used_by(lambda *t: tiled_attention(*t, block_size=MEMORY_BLOCK), (q, k[:, :2 * MEMORY_BLOCK],
                                                                              v[:, :2 * MEMORY_BLOCK]), (q, k, v))
    if used is None:
        return "its memory is measured on Linux only"
    if isinstance(used, str):
        raise _Fail(f"tiled_attention at T = {MEMORY_T:,}, blocks of {MEMORY_BLOCK}", "an output", used)
    shown = _byte_size(used)
    if used > MEMORY_HELD:
        raise _Fail(f"the memory tiled_attention uses at T = {MEMORY_T:,}, blocks of {MEMORY_BLOCK} (the "
                    f"{MEMORY_T:,} × {MEMORY_T:,} grid alone is 36 MiB)", f"at most {MEMORY_HELD >> 20} MiB", shown,
                    _hint("tiles.whole_grid"))
    return f"it uses {shown} at T = {MEMORY_T:,} (at most {MEMORY_HELD >> 20} MiB)"


def _used_by(call: Callable[..., Any], warmup: tuple, args: tuple) -> int | str | None:
    """The memory call(*args) uses (see above), in a child forked after call(*warmup) ran in another; what it
    raised, as text; None where this cannot be measured."""
    if not hasattr(os, "fork") or not os.path.exists("/proc/self/smaps_rollup"):
        return None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        answer = "none"
        try:
            os.close(read)
            torch.set_num_threads(1)  # PyTorch's thread pool does not survive a fork
            call(*warmup)
            answer = _measured_in_a_child(call, args)
        except BaseException as exc:  # noqa: BLE001 - told to the parent as text
            answer = f"it raised {type(exc).__name__}: {exc}"[:300]
        finally:
            os.write(write, answer.encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as told:
        answer = told.read().decode(errors="replace")
    os.waitpid(pid, 0)
    return None if answer == "none" else int(answer) if answer.isdigit() else answer


def _measured_in_a_child(call: Callable[..., Any], args: tuple) -> str:
    """call(*args) in a child of this process, measured from here: the bytes it used, or what it raised."""
    import ctypes
    import gc

    go_read, go_write = os.pipe()
    back_read, back_write = os.pipe()
    gc.freeze()  # the child's collections never copy what this process holds
    pid = os.fork()
    if pid == 0:
        told = b""
        try:
            os.read(go_read, 1)
            libc = ctypes.CDLL(None)
            if hasattr(libc, "mallopt"):  # glibc: freed memory serves later allocations, the heap never shrinks
                libc.mallopt(-3, 32 * 2**20)  # M_MMAP_THRESHOLD, its largest
                libc.mallopt(-1, -1)  # M_TRIM_THRESHOLD: never
            call(*args)
        except BaseException as exc:  # noqa: BLE001 - told to the parent as text
            told = f"it raised {type(exc).__name__}: {exc}"[:300].encode()
        finally:
            os.write(back_write, told or b"ok")
            os.read(go_read, 1)  # alive until measured
            os._exit(0)
    private, (faults, written) = _private(pid), _counts(pid)
    os.write(go_write, b"g")
    told = os.read(back_read, 300).decode(errors="replace")
    faults_after, written_after = _counts(pid)
    os.write(go_write, b"g")
    os.waitpid(pid, 0)
    for fd in (go_read, go_write, back_read, back_write):
        os.close(fd)
    used = private + (faults_after - faults) * os.sysconf("SC_PAGE_SIZE") + written_after - written
    return str(used) if told == "ok" else told


def _counts(pid: int) -> tuple[int, int]:
    """(page faults, bytes written through system calls) of process ``pid`` so far, by the kernel."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rpartition(b")")[2].split()
    with open(f"/proc/{pid}/io", "rb") as io:
        written = next(int(line.split()[1]) for line in io if line.startswith(b"wchar:"))
    return sum(int(fields[i]) for i in (7, 8, 9, 10)), written  # minflt, cminflt, majflt, cmajflt


def _private(pid: int) -> int:
    """The bytes only process ``pid`` maps: what it could write without a page fault."""
    with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
        return sum(int(line.split()[1]) * 1024 for line in rollup if line.startswith(b"Private_"))


def check_tiled_score_bytes(tiled_score_bytes: Callable[..., int]) -> None:
    """Check the bytes of one block of scores against the figure of section 6.5."""

    def body() -> str:
        got = tiled_score_bytes(131_072, 128)
        if not isinstance(got, int) or isinstance(got, bool):
            raise _Fail("return type of tiled_score_bytes(131072, 128)", "a Python int", type(got).__name__,
                        "return an int")
        if got != 67_108_864:
            hint = ("one block is T_q × block_size scores, not T_q × T_q" if got == 68_719_476_736 else
                    "B · H · T_q · block_size · itemsize (float32: 4 bytes)")
            raise _Fail("tiled_score_bytes(131072, 128) (float32, 1 head, batch 1)", "67,108,864 (64 MiB)",
                        f"{got:,}", hint)
        got = tiled_score_bytes(1_024, 64, n_heads=4, batch=2, dtype=torch.float16)
        if got != 1_048_576:
            raise _Fail("tiled_score_bytes(1024, 64, n_heads=4, batch=2, dtype=float16)", 1_048_576, got,
                        "multiply by heads and batch, and use the dtype's item size (float16: 2 bytes)")
        return "64 MiB for blocks of 128 keys at T = 131,072 (the grid: 64 GiB); heads, batch and dtype count"

    _run("tiled_score_bytes", body, tiled_score_bytes)


# ---------------------------------------------------------------------------
# Grade cells: where a section stands
# ---------------------------------------------------------------------------

#: One self-check and the names of the notebook functions it takes, in order.
#: The first name is the function checked; the others are optional helpers.
_Check = tuple[Callable[..., None], tuple[str, ...]]

#: Each graded section of the notebook: its heading and its self-checks.
SECTIONS: dict[str, tuple[str, tuple[_Check, ...]]] = {
    "masks": ("1. Masks", (
        (check_causal_average, ("causal_average",)),
        (check_causal_mask, ("causal_mask",)),
        (check_padding_mask, ("padding_mask",)),
        (check_apply_mask, ("apply_mask",)),
        (check_combine_masks, ("combine_masks",)),
    )),
    "scaling": ("2. Scores, scaling and the softmax", (
        (check_attention_scores, ("attention_scores",)),
        (check_attention_weights, ("attention_weights",)),
        (check_scaled_dot_product_attention, ("scaled_dot_product_attention",)),
        (check_dot_product_spread, ("dot_product_spread",)),
        (check_softmax_entropy, ("softmax_entropy",)),
    )),
    "heads": ("3. Several heads", (
        (check_split_heads, ("split_heads",)),
        (check_merge_heads, ("merge_heads", "split_heads")),
        (check_causal_self_attention, ("CausalSelfAttention",)),
    )),
    "positions": ("4. Positions", (
        (check_sinusoidal_encoding, ("sinusoidal_encoding",)),
        (check_position_similarity, ("position_similarity", "sinusoidal_encoding")),
        (check_add_positions, ("add_positions",)),
        (check_is_permutation_equivariant, ("is_permutation_equivariant",)),
    )),
    "timing": ("5. What attention costs", (
        (check_score_grid_bytes, ("score_grid_bytes",)),
        (check_time_call, ("time_call",)),
        (check_time_attention, ("time_attention",)),
        (check_fit_power_law, ("fit_power_law",)),
    )),
    "tiles": ("6. Attention in tiles", (
        (check_block_state, ("block_state",)),
        (check_merge_states, ("merge_states",)),
        (check_tiled_attention, ("tiled_attention",)),
        (check_tiled_score_bytes, ("tiled_score_bytes",)),
    )),
}


#: Each self-check by the name of the function it checks: (check, the names it takes).
_CHECKS: dict[str, _Check] = {names[0]: (check, names) for _, checks in SECTIONS.values() for check, names in checks}


def _autograding() -> bool:
    """Whether nbgrader is autograding this notebook (it sets NBGRADER_EXECUTION)."""
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


def _validating() -> bool:
    """Whether nbgrader's Validate runs this notebook (it sets NBGRADER_EXECUTION)."""
    return os.environ.get("NBGRADER_EXECUTION") == "validate"


def _message_alone() -> None:
    """The failing grade cell shows its message alone, without the traceback around the assert (IPython's
    "Minimal" mode): Validate shows the error of each failed grade cell as it is. Only in the kernel that
    Validate starts for itself."""
    with contextlib.suppress(Exception):  # the message is right either way
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            shell.InteractiveTB.set_mode(mode="Minimal")


def _quiet_outcome(check: Callable[..., None], args: list[Any]) -> str | None:
    """Run one check without printing; its shortfall, or None when it passed."""
    with contextlib.redirect_stdout(io.StringIO()):
        check(*args)
    return _last[1]


def _listing(label: str, names: list[str]) -> list[str]:
    """``  label: a, b, c`` wrapped to 76 columns (nbgrader's validate cuts longer lines)."""
    if not names:
        return []
    return textwrap.wrap(f"{label}: {', '.join(names)}", width=76, initial_indent="  ", subsequent_indent="    ")


def what_is_left(section: str, namespace: Mapping[str, Any]) -> str:
    """What keeps a section from passing all its self-checks, a few lines; "" when nothing.

    Runs every self-check of ``section`` ("masks", "scaling", "heads",
    "positions", "timing" or "tiles") quietly on the functions found in ``namespace``
    (pass ``globals()``) and prints one ✔ line when all of them pass. While
    nbgrader autogrades it runs nothing and returns "": the score comes from
    the hidden tests, never from this summary. Under nbgrader's Validate the
    last section says what is left in every section (``notebook_left``), and
    the others nothing.
    """
    if _autograding():
        return ""
    if _validating():
        if section != list(SECTIONS)[-1]:
            return ""
        left = notebook_left(namespace)
        if left:
            _message_alone()
        return left
    return _section_left(section, namespace)


def notebook_left(namespace: Mapping[str, Any]) -> str:
    """What is left in every section, quietly: a first line that lists the sections not finished, then
    what is left in each; "" when every self-check passes."""
    with contextlib.redirect_stdout(io.StringIO()):
        left = {title: _section_left(section, namespace) for section, (title, _) in SECTIONS.items()}
    blocks = [text.removesuffix(f"\n{SAY_MORE}") for text in left.values() if text]
    if not blocks:
        return ""
    numbers = [title.split(".")[0] for title, text in left.items() if text]
    listed = numbers[0] if len(numbers) == 1 else f"{', '.join(numbers[:-1])} and {numbers[-1]}"
    return "\n".join([f"Not finished: section{'s' if len(numbers) > 1 else ''} {listed}",
                      "  (below, what is left in each; the self-check under each function says more)", "",
                      *blocks])


SAY_MORE = "  (the self-check under each function says more)"


def _section_left(section: str, namespace: Mapping[str, Any]) -> str:
    title, checks = SECTIONS[section]
    missing: list[str] = []
    outcomes: dict[str, list[str]] = {"not done": [], "not right": []}
    for check, names in checks:
        if names[0] not in namespace:
            missing.append(names[0])
            continue
        shortfall = _quiet_outcome(check, [namespace.get(name) for name in names])
        if shortfall is not None:
            outcomes[shortfall].append(names[0])
    if not missing and not any(outcomes.values()):
        print(f"✔ {title}: all {len(checks)} self-checks pass")
        return ""
    lines = ([f"{title}: not finished"]
             + _listing("not done yet", outcomes["not done"])
             + _listing("not right yet (✘)", outcomes["not right"])
             + _listing("not defined (run its answer cell)", missing)
             + [SAY_MORE])
    return "\n".join(lines)

