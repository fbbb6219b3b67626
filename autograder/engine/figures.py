"""Figures as plain data: what a failed check shows better as a picture than in words.

The graders make them, only when a check fails (`fail(..., figures=[...])`; `expect_close` attaches
one by itself); they travel with the check's result as JSON and `reports.figures` draws them. Each is
bounded where it is made, so that a feedback page stays small:

    grid     expected against got for a 2-D result (a mask, weights, an encoding), the differing
             cells as runs along the rows ([row, first column, last column]): at most GRID_MAX x
             GRID_MAX cells of the 2-D slice that holds the worst entry, from its start when a
             difference is there, else around the worst entry; how many cells differ in that slice
             and in the whole result, and the slice's worst cells (at most ENTRIES_MAX), all counted
             as the check's own message counts them (`differing`)
    entries  the worst entries of a result, as a table: at most ENTRIES_MAX rows
    loglog   times against T on log-log axes, against the line T^power: at most SERIES_MAX series
    calls    the duration of each call a timer made, by the grader's clock, and what the timer said

Numbers keep 4 significant digits; NaN and infinities are the strings "nan", "inf" and "-inf", so
that results.json stays strict JSON.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import torch

GRID_MAX = 24
ENTRIES_MAX = 8
SERIES_MAX = 4
POINTS_MAX = 12
CALLS_MAX = 40
TEXT_MAX = 200


def number(x: Any) -> float | str:
    """`x` as plain data: 4 significant digits, or "nan" / "inf" / "-inf"."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return float(f"{x:.4g}")


def _text(s: Any) -> str:
    return str(s)[:TEXT_MAX]


def _as_cpu(t: Any) -> torch.Tensor:
    return t.detach().to("cpu") if type(t) is torch.Tensor else torch.as_tensor(t)


def differing(expected: torch.Tensor, got: torch.Tensor, atol: float, rtol: float) -> torch.Tensor:
    """Where `got` is not `expected`, as `expect_close` judges (NaN equals NaN): the one count of
    differing entries that a check's message, a picture's caption and its table all give."""
    if expected.dtype == torch.bool and got.dtype == torch.bool:
        return got != expected
    return ~torch.isclose(got.double(), expected.double(), atol=atol, rtol=rtol, equal_nan=True)


def _gap(expected: torch.Tensor, got: torch.Tensor, differ: torch.Tensor) -> torch.Tensor:
    """How far off each entry is (inf where one is NaN or infinite and the other not); 0 where equal."""
    gap = (got.double() - expected.double()).abs().nan_to_num(nan=float("inf"), posinf=float("inf"))
    return torch.where(differ, gap, torch.zeros_like(gap))


def _window(size: int, worst: int, differs: torch.Tensor, most: int) -> int:
    """The first index of a window of `most` along an axis of `size`: from the start when some
    difference is there (a student reads a result from its first row), else around the worst entry."""
    if size <= most or bool(differs[:most].any()):
        return 0
    return max(0, min(worst - most // 2, size - most))


def grid(title: str, expected: Any, got: Any, *, rows: str = "row", cols: str = "column", atol: float = 0.0,
         rtol: float = 0.0, meaning: tuple[str, str] | None = None) -> dict | None:
    """Expected against got, cell by cell, for results of two or more dimensions of the same shape
    (None otherwise). `rows` and `cols` name the last two axes; `meaning` says what True and
    False stand for in a boolean result."""
    expected, got = _as_cpu(expected), _as_cpu(got)
    if expected.shape != got.shape or expected.dim() < 2 or expected.numel() == 0:
        return None
    boolean = expected.dtype == torch.bool and got.dtype == torch.bool
    if not boolean:
        expected, got = expected.double(), got.double()
    differ = differing(expected, got, atol, rtol)
    gap = _gap(expected, got, differ)
    worst = int(gap.flatten().argmax()) if bool(differ.any()) else 0
    index = []
    for size in reversed(expected.shape):
        worst, i = divmod(worst, size)
        index.append(i)
    index.reverse()
    lead, (r, c) = index[:-2], index[-2:]
    differ_all, total_all = int(differ.sum()), int(differ.numel())
    for i in lead:
        expected, got, differ = expected[i], got[i], differ[i]
    R, C = expected.shape
    gap = _gap(expected, got, differ)
    worst_cells = [divmod(k, C) for k in gap.flatten().argsort(descending=True, stable=True)[:ENTRIES_MAX].tolist()
                   if bool(differ.flatten()[k])]
    cell = (lambda t, i, j: int(t[i, j])) if boolean else (lambda t, i, j: number(t[i, j]))
    r0 = _window(R, r, differ.any(dim=1), GRID_MAX)
    c0 = _window(C, c, differ[r0:r0 + GRID_MAX].any(dim=0), GRID_MAX)
    window = (slice(r0, r0 + GRID_MAX), slice(c0, c0 + GRID_MAX))
    values = (lambda t: [[int(v) for v in row] for row in t.tolist()]) if boolean else \
        (lambda t: [[number(v) for v in row] for row in t.tolist()])
    figure = {"kind": "grid", "title": _text(title), "rows": _text(rows), "cols": _text(cols), "index": lead,
              "offset": [r0, c0], "shape": [R, C], "values": "bool" if boolean else "number",
              "expected": values(expected[window]), "got": values(got[window]),
              "differ": runs(differ[window]),
              "differ_total": int(differ.sum()), "total": R * C,
              "worst": [[i, j, cell(expected, i, j), cell(got, i, j)] for i, j in worst_cells]}
    if lead:
        figure["differ_all"], figure["total_all"] = differ_all, total_all
    if boolean and meaning:
        figure["meaning"] = [_text(meaning[0]), _text(meaning[1])]
    return figure


def runs(marked: torch.Tensor) -> list[list[int]]:
    """The True cells of a 2-D boolean tensor as runs along its rows: [row, first column, last column]."""
    found = []
    for i, row in enumerate(marked.tolist()):
        j = 0
        while j < len(row):
            if row[j]:
                start = j
                while j < len(row) and row[j]:
                    j += 1
                found.append([i, start, j - 1])
            else:
                j += 1
    return found


def cells(runs_: list[list[int]]) -> set[tuple[int, int]]:
    """The cells of `runs`."""
    return {(int(i), j) for i, first, last in runs_ for j in range(int(first), int(last) + 1)}


def entries(title: str, expected: Any, got: Any, *, atol: float = 0.0, rtol: float = 0.0) -> dict | None:
    """The worst entries (at most ENTRIES_MAX) of a result of any shape: index, expected, got, gap."""
    expected, got = _as_cpu(expected), _as_cpu(got)
    if expected.shape != got.shape or expected.numel() == 0:
        return None
    differ = differing(expected, got, atol, rtol)
    gap = _gap(expected, got, differ).flatten()
    order = [i for i in gap.argsort(descending=True, stable=True)[:ENTRIES_MAX].tolist() if bool(differ.flatten()[i])]
    shape = tuple(expected.shape)
    rows = []
    for flat in order:
        index, rest = [], flat
        for size in reversed(shape):
            rest, i = divmod(rest, size)
            index.append(i)
        where = f"[{', '.join(map(str, reversed(index)))}]"
        rows.append([where, number(expected.flatten()[flat]), number(got.flatten()[flat]), number(gap[flat])])
    return {"kind": "entries", "title": _text(title), "columns": ["entry", "expected", "yours", "gap"], "rows": rows,
            "differ_total": int(differ.sum()), "total": int(expected.numel())}


def mismatch(title: str, expected: Any, got: Any, *, atol: float = 0.0, rtol: float = 0.0,
             axes: tuple[str, str] | None = None, meaning: tuple[str, str] | None = None) -> list[dict]:
    """The figure for a result that is not what was expected: a grid for two or more dimensions,
    the worst entries otherwise. Never raises: a figure is a help, not a judgment."""
    try:
        rows, cols = axes or ("row", "column")
        found = grid(title, expected, got, rows=rows, cols=cols, atol=atol, rtol=rtol, meaning=meaning)
        if found is None:
            found = entries(title, expected, got, atol=atol, rtol=rtol)
        return [found] if found is not None else []
    except Exception:  # noqa: BLE001 - whatever the submission returned, the check's failure stands
        return []


def loglog(title: str, Ts: Sequence[int], series: dict[str, Sequence[Any]], *,
           guides: dict[str, float] | None = None, allowed: Sequence[tuple[float, float] | None] | None = None,
           x: str = "T (tokens)", y: str = "seconds") -> dict:
    """Times against T on log-log axes, with guide lines of slope `guides` (name -> power; default the
    T² line) through the first series; `allowed`, per T, the range the grader accepts."""
    Ts = [int(T) for T in list(Ts)[:POINTS_MAX]]
    guides = {"T²": 2.0} if guides is None else guides
    figure = {"kind": "loglog", "title": _text(title), "x": _text(x), "y": _text(y), "Ts": Ts,
              "series": [{"name": _text(name), "times": [_plain_number(t) for t in list(times)[:len(Ts)]]}
                         for name, times in list(series.items())[:SERIES_MAX]],
              "guides": [{"name": _text(name), "power": number(power)}
                         for name, power in list(guides.items())[:SERIES_MAX]]}
    if allowed is not None:
        figure["allowed"] = [None if a is None else [number(a[0]), number(a[1])] for a in list(allowed)[:len(Ts)]]
    return figure


def calls(title: str, seconds: Iterable[float], timed: Iterable[bool], yours: Any,
          allowed: tuple[float, float] | None = None) -> dict:
    """Each call of a timed function (its duration by the grader's clock, whether it was a timed
    one), what the timer reported, and the range the grader accepts."""
    seconds, timed = list(seconds)[:CALLS_MAX], list(timed)[:CALLS_MAX]
    figure = {"kind": "calls", "title": _text(title), "seconds": [number(s) for s in seconds],
              "timed": [bool(t) for t in timed], "yours": _plain_number(yours)}
    if allowed is not None:
        figure["allowed"] = [number(allowed[0]), number(allowed[1])]
    return figure


def _plain_number(x: Any) -> float | str | None:
    """A number as plain data, or None when it is none (what a student returned may be anything)."""
    if type(x) in (int, float) or (type(x) is torch.Tensor and x.numel() == 1 and not x.dtype.is_complex):
        return number(float(x))
    return None
