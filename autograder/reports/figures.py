"""Drawing the figures the graders attach to failed checks (plain data, see engine.figures).

Inline SVG written here, nothing else: a grid is two heatmaps side by side (expected, yours)
whose cells are a small PNG made here (one byte per pixel, a palette, zlib), with the differing
cells outlined by one SVG path per heatmap; a study is a log-log plot with guide lines; a timer's
calls are bars on a log scale; worst entries are a table. Each figure comes with a caption and
the numbers as text, so the page reads without pictures. A figure that is not as expected
(an older or damaged results.json) is left out, never an error.
"""

from __future__ import annotations

import base64
import html
import math
import struct
import zlib
from typing import Any

FONT = "font-family='sans-serif' font-size='10'"
MARK = "#ff6d00"  # the outline of differing cells
SEPARATOR = (255, 255, 255)
TRUE_COLOR, FALSE_COLOR = (59, 116, 184), (236, 239, 243)
NAN_COLOR, INF_COLOR, NEG_INF_COLOR = (20, 20, 20), (150, 40, 40), (120, 120, 120)
SEQUENTIAL = [(247, 251, 255), (198, 219, 239), (107, 174, 214), (33, 113, 181), (8, 58, 120)]
DIVERGING = [(64, 0, 75), (153, 112, 171), (247, 247, 247), (90, 174, 97), (0, 68, 27)]
LEVELS = 64
SERIES_COLORS = ["#1f5fa8", "#c62828", "#6a1b9a", "#2e7d32"]
GUIDE_DASHES = ["6 4", "2 3", "8 3 2 3", "1 2"]
GUIDE_STYLES = ["dashed", "dotted", "dash-dotted", "finely dotted"]  # what each of GUIDE_DASHES draws, in words
TABLE_ROWS = 8

esc = html.escape


# ---------------------------------------------------------------- what every figure offers


def figure_html(figure: Any) -> str:
    """The figure for a feedback page: the picture, its caption, the numbers as text; "" if it cannot be drawn."""
    try:
        kind = figure["kind"]
        if kind == "entries":
            return _entries_html(figure)
        drawn = _DRAW[kind](figure)
    except Exception:  # noqa: BLE001 - a picture is a help: without it the page still says everything
        return ""
    width, height, body, caption, numbers = drawn
    svg = _svg(width, height, body, caption)
    return (f"<figure class='fig' data-kind='{esc(kind)}'>{svg}<figcaption>{esc(caption)}</figcaption>"
            f"{numbers}</figure>")


def figure_svg(figure: Any, heading: str = "") -> str | None:
    """The picture alone, as a standalone SVG document (for a notebook's output), a line `heading`
    above it; None for a table or a figure that cannot be drawn."""
    try:
        width, height, body, caption, _ = _DRAW[figure["kind"]](figure)
    except Exception:  # noqa: BLE001
        return None
    if heading:
        body = (f"<text x='4' y='12' font-weight='bold'>{esc(heading[:160])}</text>"
                f"<g transform='translate(0 18)'>{body}</g>")
        height += 18
        width = max(width, min(900, 6 * len(heading[:160]) + 8))
    return _svg(width, height, body, caption)


def figure_block(figure: Any, heading: str = "") -> str | None:
    """The picture for a notebook's HTML output: the SVG with its alternative text and the caption under
    it, `heading` above (nbconvert's feedback pages show an SVG output as an <img> without alternative
    text; an HTML output is shown as it is). None where figure_svg gives none."""
    svg = figure_svg(figure, heading)
    if svg is None:
        return None
    return f"<figure style='margin:0'>{svg}<figcaption>{esc(figure_text(figure))}</figcaption></figure>"


def figure_text(figure: Any) -> str:
    """What the figure shows, in words (the caption)."""
    try:
        if figure["kind"] == "entries":
            return _entries_caption(figure)
        return _DRAW[figure["kind"]](figure)[3]
    except Exception:  # noqa: BLE001
        return ""


def _svg(width: float, height: float, body: str, label: str) -> str:
    """An SVG picture whose alternative text (its title and aria-label) is `label`, the caption."""
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width:.0f}' height='{height:.0f}' "
            f"viewBox='0 0 {width:.0f} {height:.0f}' role='img' aria-label='{esc(label)}' {FONT}>"
            f"<title>{esc(label)}</title>{body}</svg>")


# ---------------------------------------------------------------- numbers as text


def _value(v: Any) -> float | None:
    """A finite number, or None (for "nan", "inf", "-inf" and anything else)."""
    return float(v) if type(v) in (int, float) and math.isfinite(v) else None


def fmt(v: Any) -> str:
    if type(v) is bool:
        return str(v)
    if type(v) in (int, float):
        return f"{v:.4g}"
    return str(v) if v is not None else "—"


def fmt_seconds(s: Any) -> str:
    s = _value(s)
    if s is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(s) >= scale or unit == "ns":
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"


def _table(head: list[str], rows: list[list[str]], cls: str = "num") -> str:
    out = [f"<table class='{cls}'><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"]
    out += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows]
    return "".join(out) + "</table>"


def _numbers(summary: str, table: str) -> str:
    return f"<details><summary>{esc(summary)}</summary>{table}</details>" if table else ""


# ---------------------------------------------------------------- a small PNG


def _png(width: int, height: int, rows: list[bytes], palette: list[tuple[int, int, int]]) -> bytes:
    """An 8-bit palette PNG of `rows` (each `width` palette indices)."""
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + row for row in rows)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
            + chunk(b"PLTE", b"".join(bytes(c) for c in palette)) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


def _ramp(stops: list[tuple[int, int, int]], n: int) -> list[tuple[int, int, int]]:
    out = []
    for i in range(n):
        t = i / (n - 1) * (len(stops) - 1)
        k = min(int(t), len(stops) - 2)
        f = t - k
        red, green, blue = (round(a + (b - a) * f) for a, b in zip(stops[k], stops[k + 1]))
        out.append((red, green, blue))
    return out


def _hex(c: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % c


# ---------------------------------------------------------------- grid: expected and yours, cell by cell


class _Scale:
    """Cell values to palette indices: True/False, or a sequential (all >= 0) or diverging ramp."""

    def __init__(self, boolean: bool, values: list[Any]):
        self.boolean = boolean
        if boolean:
            self.palette = [FALSE_COLOR, TRUE_COLOR]
        else:
            finite = [x for x in map(_value, values) if x is not None]
            lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
            self.diverging = lo < 0
            if self.diverging:
                m = max(-lo, hi) or 1.0
                self.lo, self.hi = -m, m
            else:
                self.lo, self.hi = 0.0, hi or 1.0
            self.palette = _ramp(DIVERGING if self.diverging else SEQUENTIAL, LEVELS)
        self.specials = {"nan": len(self.palette), "inf": len(self.palette) + 1, "-inf": len(self.palette) + 2}
        self.separator = len(self.palette) + 3
        self.palette = self.palette + [NAN_COLOR, INF_COLOR, NEG_INF_COLOR, SEPARATOR]
        self.seen: set[str] = set()

    def index(self, v: Any) -> int:
        if self.boolean:
            return 1 if v else 0
        x = _value(v)
        if x is None:
            key = v if v in self.specials else "nan"
            self.seen.add(key)
            return self.specials[key]
        t = (x - self.lo) / (self.hi - self.lo)
        return max(0, min(LEVELS - 1, round(t * (LEVELS - 1))))


def _heatmap(cells: list[list[Any]], scale: _Scale, size: int) -> str:
    """The cells as a data: URI of a PNG, `size` pixels a cell, a 1-pixel separator between cells."""
    columns = len(cells[0])
    sep = bytes([scale.separator])
    lines = []
    for row in cells:
        line = b"".join(bytes([scale.index(v)]) * (size - 1) + sep for v in row)
        lines += [line] * (size - 1) + [sep * (columns * size)]
    png = _png(columns * size, len(cells) * size, lines, scale.palette)
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _runs(marked: set[tuple[int, int]], rows: int, columns: int) -> list[tuple[int, int, int]]:
    """The marked cells as runs (row, first column, columns) along each row."""
    runs = []
    for i in range(rows):
        j = 0
        while j < columns:
            if (i, j) in marked:
                start = j
                while j < columns and (i, j) in marked:
                    j += 1
                runs.append((i, start, j - start))
            else:
                j += 1
    return runs


def _outline(marked: set[tuple[int, int]], rows: int, columns: int, x: int, y: int, size: int) -> str:
    """An SVG path along the border of the marked region: the edges between a marked cell and one
    that is not (or the edge of the grid), joined into straight runs. A lone cell is a square, a
    block of marked cells one frame, so a grid where everything differs is not drowned in lines."""
    d = []
    for i in range(rows + 1):  # horizontal edges above row i
        j = 0
        while j < columns:
            if ((i, j) in marked) != ((i - 1, j) in marked):
                start = j
                while j < columns and ((i, j) in marked) != ((i - 1, j) in marked):
                    j += 1
                d.append(f"M{x + start * size} {y + i * size}h{(j - start) * size}")
            else:
                j += 1
    for j in range(columns + 1):  # vertical edges left of column j
        i = 0
        while i < rows:
            if ((i, j) in marked) != ((i, j - 1) in marked):
                start = i
                while i < rows and ((i, j) in marked) != ((i, j - 1) in marked):
                    i += 1
                d.append(f"M{x + j * size} {y + start * size}v{(i - start) * size}")
            else:
                i += 1
    return "".join(d)


def _ticks(count: int, offset: int, size: int) -> list[int]:
    """Which of `count` cells get a number: all when there is room, else every 5th (or 10th) and the last."""
    step = 1 if size >= 14 else 5 if size >= 7 else 10
    picked = [k for k in range(count) if (offset + k) % step == 0]
    if count - 1 not in picked and (not picked or (count - 1 - picked[-1]) * size >= 14):
        picked.append(count - 1)
    return picked


def _grid(figure: dict) -> tuple[float, float, str, str, str]:
    expected, got = figure["expected"], figure["got"]
    R, C = len(expected), len(expected[0])
    if not (0 < R <= 64 and 0 < C <= 64) or len(got) != R or any(len(r) != C for r in expected + got):
        raise ValueError("not a grid")
    boolean = figure.get("values") == "bool"
    r0, c0 = (int(x) for x in figure.get("offset", [0, 0]))
    marked = {(int(i), j) for i, first, last in figure.get("differ", []) if 0 <= int(i) < R
              for j in range(max(0, int(first)), min(C, int(last) + 1))}
    scale = _Scale(boolean, [v for row in expected + got for v in row])
    size = max(6, min(22, 240 // max(R, C)))
    left, top, gap = 30, 30, 34
    pw, ph = C * size, R * size
    width = max(left + 2 * pw + gap + 10, 330)
    legend_y = top + ph + 16
    body = []
    for k, (label, cells) in enumerate((("expected", expected), ("yours", got))):
        x = left + k * (pw + gap)
        body.append(f"<text x='{x}' y='11' font-weight='bold'>{label}</text>")
        body.append(f"<image x='{x}' y='{top}' width='{pw}' height='{ph}' preserveAspectRatio='none' "
                    f"style='image-rendering:pixelated' href='{_heatmap(cells, scale, size)}'/>")
        for j in _ticks(C, c0, size):
            body.append(f"<text x='{x + j * size + size / 2:.0f}' y='{top - 4}' text-anchor='middle' "
                        f"font-size='8'>{c0 + j}</text>")
        for i in _ticks(R, r0, size):
            body.append(f"<text x='{x - 3}' y='{top + i * size + size / 2 + 3:.0f}' text-anchor='end' "
                        f"font-size='8'>{r0 + i}</text>")
        if marked:  # data-cells: the outlined cells, as runs "row:first-last" in the result's own indices
            runs = " ".join(f"{r0 + i}:{c0 + j}-{c0 + j + n - 1}" for i, j, n in _runs(marked, R, C))
            body.append(f"<path class='marks' data-cells='{runs}' d='{_outline(marked, R, C, x, top, size)}' "
                        f"fill='none' stroke='{MARK}' stroke-width='2' stroke-linecap='square'/>")
    body.append(_grid_legend(figure, scale, boolean, left, legend_y))
    height = legend_y + 24
    caption = _grid_caption(figure, R, C, r0, c0, len(marked))
    return width, height, "".join(body), caption, _grid_numbers(figure, marked, r0, c0)


def _grid_legend(figure: dict, scale: _Scale, boolean: bool, x: float, y: float) -> str:
    out = []

    def swatch(color: str, label: str, stroke: str = "#999") -> None:
        nonlocal x
        out.append(f"<rect x='{x}' y='{y - 8}' width='10' height='10' fill='{color}' stroke='{stroke}'/>"
                   f"<text x='{x + 13}' y='{y + 1}'>{esc(label)}</text>")
        x += 22 + 5.5 * len(label)

    if boolean:
        meaning = figure.get("meaning") or ["", ""]
        swatch(_hex(TRUE_COLOR), "True" + (f" ({meaning[0]})" if meaning[0] else ""))
        swatch(_hex(FALSE_COLOR), "False" + (f" ({meaning[1]})" if meaning[1] else ""))
    else:
        out.append(f"<text x='{x}' y='{y + 1}'>{fmt(scale.lo)}</text>")
        x += 6 + 5.5 * len(fmt(scale.lo))
        for k in range(8):
            out.append(f"<rect x='{x + 8 * k}' y='{y - 8}' width='8' height='10' "
                       f"fill='{_hex(scale.palette[round(k * (LEVELS - 1) / 7)])}'/>")
        x += 68
        out.append(f"<text x='{x}' y='{y + 1}'>{fmt(scale.hi)}</text>")
        x += 14 + 5.5 * len(fmt(scale.hi))
        for key, color in (("nan", NAN_COLOR), ("inf", INF_COLOR), ("-inf", NEG_INF_COLOR)):
            if key in scale.seen:
                swatch(_hex(color), {"nan": "NaN", "inf": "+inf", "-inf": "−inf"}[key])
    swatch("none", "differs", MARK)
    rows, cols = figure.get("rows", "row"), figure.get("cols", "column")
    out.append(f"<text x='30' y='{y + 15}' fill='#555'>rows: {esc(str(rows))}, columns: {esc(str(cols))}</text>")
    return "".join(out)


def _grid_caption(figure: dict, R: int, C: int, r0: int, c0: int, marked: int = 0) -> str:
    """What the grid shows, with the counts the check's message gives (engine.figures.differing): of the
    slice drawn, of the whole result when the slice is one of many, of the window when it is cut."""
    index = figure.get("index") or []
    where = f", at [{', '.join(str(int(i)) for i in index)}, :, :]" if index else ""
    differ, total = int(figure.get("differ_total", 0)), int(figure.get("total", R * C))
    caption = f"{figure.get('title', '')}{where}: expected (left) and yours (right); {differ:,} of {total:,} cells differ"
    whole = (f"{int(figure['differ_all']):,} of {int(figure.get('total_all', 0)):,} entries in the whole result"
             if index and "differ_all" in figure else "")
    full_r, full_c = (int(x) for x in figure.get("shape", [R, C]))
    if (full_r, full_c) != (R, C):
        caption += (f"{f' ({whole})' if whole else ''}; showing rows {r0}–{r0 + R - 1} and columns {c0}–{c0 + C - 1} "
                    f"of {full_r} × {full_c}, where {marked:,} of the {R * C:,} cells shown differ (outlined)")
    else:
        caption += f" (outlined{f'; {whole}' if whole else ''})"
    return caption + "."


def _grid_numbers(figure: dict, marked: set[tuple[int, int]], r0: int, c0: int) -> str:
    """The differing cells as a table: for numbers the furthest off first, for True/False in order; from the
    whole slice when the figure lists its worst cells (then they agree with the caption's count), else
    from the cells drawn."""
    if not marked and not figure.get("worst"):
        return ""
    expected, got = figure["expected"], figure["got"]
    boolean = figure.get("values") == "bool"
    show = (lambda v: str(bool(v))) if boolean else fmt
    worst = [w for w in figure.get("worst") or [] if type(w) is list and len(w) == 4]
    if worst:
        rows = [[f"[{int(i)}, {int(j)}]", show(e), show(g)] for i, j, e, g in worst[:TABLE_ROWS]]
        count, where = int(figure.get("differ_total", len(rows))), ""
    else:
        def gap(cell: tuple[int, int]) -> float:
            a, b = _value(expected[cell[0]][cell[1]]), _value(got[cell[0]][cell[1]])
            return abs(a - b) if a is not None and b is not None else math.inf

        cells = (sorted(marked) if boolean else sorted(marked, key=lambda c: (-gap(c), c)))[:TABLE_ROWS]
        rows = [[f"[{r0 + i}, {c0 + j}]", show(expected[i][j]), show(got[i][j])] for i, j in cells]
        count, where = len(marked), " shown"
    shown = f" ({'the furthest off' if not boolean else 'the first'} {len(rows)} of the {count:,}{where})" \
        if count > len(rows) else ""
    return _numbers(f"The differing cells{shown}", _table(["cell", "expected", "yours"], rows))


# ---------------------------------------------------------------- log-log: a study against T^power


class _LogAxis:
    def __init__(self, values: list[float], start: float, end: float, pad: float = 0.15, least: float = 1.0):
        logs = [math.log10(v) for v in values]
        lo, hi = (min(logs), max(logs)) if logs else (-3.0, 0.0)
        if hi - lo < least:
            mid = (hi + lo) / 2
            lo, hi = mid - least / 2, mid + least / 2
        self.lo, self.hi = lo - pad, hi + pad
        self.start, self.end = start, end

    def __call__(self, v: float) -> float:
        return self.start + (math.log10(v) - self.lo) / (self.hi - self.lo) * (self.end - self.start)

    def decades(self) -> list[float]:
        ticks = [10.0 ** k for k in range(math.ceil(self.lo), math.floor(self.hi) + 1)]
        if len(ticks) < 2:
            ticks = sorted(t for k in range(math.floor(self.lo), math.ceil(self.hi) + 1) for m in (1, 2, 5)
                           if self.lo <= math.log10(t := m * 10.0 ** k) <= self.hi)
        return ticks


def _positive(v: Any) -> float | None:
    x = _value(v)
    return x if x is not None and x > 0 else None


def _slope(Ts: list[int], times: list[Any]) -> float | None:
    points = [(math.log(T), math.log(t)) for T, t in zip(Ts, map(_positive, times)) if t is not None and T > 0]
    if len(points) < 2:
        return None
    mx, my = sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points)
    sxx = sum((p[0] - mx) ** 2 for p in points)
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx if sxx else None


def _clip_line(power: float, anchor: float, x0: float, x1: float, y0: float, y1: float):
    """The part of log t = power · log T + anchor within [x0, x1] × [y0, y1] (log units), or None."""
    lo, hi = x0, x1
    if power != 0:
        a, b = sorted(((y0 - anchor) / power, (y1 - anchor) / power))
        lo, hi = max(lo, a), min(hi, b)
    elif not y0 <= anchor <= y1:
        return None
    return (lo, power * lo + anchor, hi, power * hi + anchor) if hi > lo else None


def _loglog(figure: dict) -> tuple[float, float, str, str, str]:
    Ts = [int(T) for T in figure["Ts"]]
    if not Ts or any(T <= 0 for T in Ts):
        raise ValueError("no Ts")
    series = [(str(s.get("name", "")), list(s.get("times", []))) for s in figure.get("series", [])][:4]
    allowed = list(figure.get("allowed") or [])
    guides = [(str(g.get("name", "")), _value(g.get("power"))) for g in figure.get("guides", [])][:4]
    seconds = figure.get("y", "seconds") == "seconds"
    label = fmt_seconds if seconds else fmt
    width, height = 420, 250
    left, right, top, bottom = 64, width - 14, 12, height - 74
    ys = [t for _, times in series for t in map(_positive, times) if t is not None]
    ys += [v for a in allowed if a for v in map(_positive, a) if v is not None]
    X = _LogAxis([float(T) for T in Ts], left, right, pad=0.12, least=0.3)
    Y = _LogAxis(ys, bottom, top, pad=0.2, least=1.0)
    body = _plot_area(left, right, top, bottom, Y, label)
    last_x = -1e9
    for T in Ts:
        x = X(T)
        body.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{top}' y2='{bottom}' stroke='#eee'/>")
        if x - last_x >= 26:
            body.append(f"<text x='{x:.1f}' y='{bottom + 12}' text-anchor='middle'>{T}</text>")
            last_x = x
    body.append(f"<text x='{(left + right) / 2:.0f}' y='{bottom + 25}' text-anchor='middle' fill='#555'>"
                f"{esc(str(figure.get('x', 'T')))} (log scale)</text>")
    for T, a in zip(Ts, allowed):
        lo, hi = (_positive(a[0]), _positive(a[1])) if a else (None, None)
        if lo and hi and hi >= lo:
            x, y_hi, y_lo = X(T), Y(hi), Y(lo)
            body.append(f"<rect class='allowed' x='{x - 6:.1f}' y='{y_hi:.1f}' width='12' "
                        f"height='{max(1.5, y_lo - y_hi):.1f}' fill='#c8e6c9' stroke='#43a047'/>")
    # The guides pass through what the grader allows where it says (the truth), else through the first series.
    mids = [(T, math.sqrt(lo * hi)) for T, a in zip(Ts, allowed) if a
            for lo, hi in [(_positive(a[0]), _positive(a[1]))] if lo and hi]
    anchors = mids or [(T, t) for T, t in zip(Ts, map(_positive, series[0][1] if series else [])) if t is not None]
    first = [(math.log10(T), math.log10(t)) for T, t in anchors]
    legend = []
    drawn: list[tuple[str, str, float]] = []  # the guides drawn: style, name, power
    for k, (name, power) in enumerate(guides):
        if power is None or not first:
            continue
        anchor = sum(ly - power * lx for lx, ly in first) / len(first)
        segment = _clip_line(power, anchor, X.lo, X.hi, Y.lo, Y.hi)
        dash = GUIDE_DASHES[k % len(GUIDE_DASHES)]
        if segment:
            xa, ya, xb, yb = segment
            px = lambda lx: X(10 ** lx)  # noqa: E731
            py = lambda ly: Y(10 ** ly)  # noqa: E731
            body.append(f"<line class='guide' x1='{px(xa):.1f}' y1='{py(ya):.1f}' x2='{px(xb):.1f}' y2='{py(yb):.1f}' "
                        f"stroke='#666' stroke-width='1.5' stroke-dasharray='{dash}'/>")
        legend.append(("guide", dash, f"∝ {name}" if name == "T²" else name))
        drawn.append((GUIDE_STYLES[k % len(GUIDE_STYLES)], name, power))
    left_out = []
    for k, (name, times) in enumerate(series):
        color = SERIES_COLORS[k % len(SERIES_COLORS)]
        points = []
        for T, t in zip(Ts, times):
            v = _positive(t)
            if v is None:
                left_out.append(f"{fmt(t)} at T = {T}")
            else:
                points.append((X(T), Y(v), T, v))
        if len(points) > 1:
            body.append(f"<polyline points='{' '.join(f'{x:.1f},{y:.1f}' for x, y, _, _ in points)}' fill='none' "
                        f"stroke='{color}' stroke-width='1.5'/>")
        body += [f"<circle class='point' cx='{x:.1f}' cy='{y:.1f}' r='3.5' fill='{color}'><title>T = {T}: "
                 f"{esc(label(v))}</title></circle>" for x, y, T, v in points]
        legend.append(("series", color, name))
    if any(a for a in allowed):
        legend.append(("allowed", "", "what the grader's clock allows"))
    x, y = left - 40, bottom + 42
    for kind, style, name in legend:
        if x + 30 + 5.5 * len(name) > width and x > left - 40:
            x, y = left - 40, y + 14
        if kind == "guide":
            body.append(f"<line x1='{x}' x2='{x + 18}' y1='{y - 3}' y2='{y - 3}' stroke='#666' stroke-width='1.5' "
                        f"stroke-dasharray='{style}'/>")
        elif kind == "series":
            body.append(f"<circle cx='{x + 9}' cy='{y - 3}' r='3.5' fill='{style}'/>")
        else:
            body.append(f"<rect x='{x + 4}' y='{y - 9}' width='10' height='11' fill='#c8e6c9' stroke='#43a047'/>")
        body.append(f"<text x='{x + 22}' y='{y + 1}'>{esc(name)}</text>")
        x += 34 + 5.5 * len(name)
    height = max(height, y + 10)
    caption = str(figure.get("title", ""))
    slope = _slope(Ts, series[0][1]) if series else None
    if slope is not None:
        name = series[0][0] or "the times"
        caption += f": {name} grow{'' if name.endswith('s') else 's'} as T^{slope:.2f} on log-log axes"
        if drawn:
            caption += " (" + "; ".join(f"the {style} line: slope {power:g}" for style, _, power in drawn) + ")"
    if left_out:
        caption += f"; not drawn (not a positive number): {', '.join(left_out[:4])}"
    head = ["T"] + [name or "times" for name, _ in series] + (["allowed"] if allowed else [])
    rows = []
    for i, T in enumerate(Ts):
        row = [str(T)] + [label(times[i]) if i < len(times) and _value(times[i]) is not None
                          else fmt(times[i] if i < len(times) else None) for _, times in series]
        if allowed:
            a = allowed[i] if i < len(allowed) else None
            row.append(f"{label(a[0])} to {label(a[1])}" if a else "—")
        rows.append(row)
    return width, height, "".join(body), caption + ".", _numbers("The numbers", _table(head, rows))


def _plot_area(left: float, right: float, top: float, bottom: float, Y: "_LogAxis", label) -> list[str]:
    """A plot's frame and its horizontal lines at each power of ten of the log axis `Y`, labelled."""
    body = [f"<rect x='{left}' y='{top}' width='{right - left}' height='{bottom - top}' fill='#fff' stroke='#999'/>"]
    for t in Y.decades():
        y = Y(t)
        body.append(f"<line x1='{left}' x2='{right}' y1='{y:.1f}' y2='{y:.1f}' stroke='#eee'/>"
                    f"<text x='{left - 4}' y='{y + 3:.1f}' text-anchor='end'>{esc(label(t))}</text>")
    return body


# ---------------------------------------------------------------- a timer's calls


def _calls(figure: dict) -> tuple[float, float, str, str, str]:
    seconds, timed = list(figure["seconds"]), [bool(t) for t in figure.get("timed", [])]
    if not seconds:
        raise ValueError("no calls")
    timed += [True] * (len(seconds) - len(timed))
    yours, allowed = figure.get("yours"), figure.get("allowed")
    values = [v for v in map(_positive, seconds + [yours] + list(allowed or [])) if v is not None]
    n = len(seconds)
    bar = 16 if n <= 12 else 8
    left, top = 64, 12
    right = left + max(200, n * (bar + 4) + 8)
    width, bottom = right + 120, 150
    Y = _LogAxis(values, bottom, top, pad=0.2, least=1.0)
    body = _plot_area(left, right, top, bottom, Y, fmt_seconds)
    lo, hi = (_positive(allowed[0]), _positive(allowed[1])) if allowed else (None, None)
    if lo and hi and hi >= lo:
        body.append(f"<rect class='allowed' x='{left}' y='{Y(hi):.1f}' width='{right - left}' "
                    f"height='{max(1.5, Y(lo) - Y(hi)):.1f}' fill='#c8e6c9' fill-opacity='0.7' stroke='#43a047'/>"
                    f"<text x='{right + 4}' y='{(Y(hi) + Y(lo)) / 2 + 3:.1f}' fill='#2e7d32'>allowed</text>")
    for k, (s, t) in enumerate(zip(seconds, timed)):
        v = _positive(s)
        x = left + 6 + k * (bar + 4)
        if v is not None:
            y = Y(v)
            body.append(f"<rect class='call' x='{x}' y='{y:.1f}' width='{bar}' height='{max(1.0, bottom - y):.1f}' "
                        f"fill='{'#1f5fa8' if t else '#bbb'}'><title>call {k + 1}: {esc(fmt_seconds(v))}"
                        f"{'' if t else ' (warm-up)'}</title></rect>")
        if bar >= 12 or k % 2 == 0:
            body.append(f"<text x='{x + bar / 2}' y='{bottom + 11}' text-anchor='middle' font-size='8'>{k + 1}</text>")
    mine = _positive(yours)
    if mine is not None:
        y = Y(mine)
        body.append(f"<line class='yours' x1='{left}' x2='{right}' y1='{y:.1f}' y2='{y:.1f}' stroke='{MARK}' "
                    f"stroke-width='2'/><text x='{right + 4}' y='{y + 3:.1f}' fill='{MARK}'>yours: "
                    f"{esc(fmt_seconds(mine))}</text>")
    body.append(f"<text x='{left}' y='{bottom + 24}' fill='#555'>calls (blue: timed, grey: warm-up); "
                f"seconds, log scale</text>")
    timed_values = sorted(v for v, t in zip(map(_positive, seconds), timed) if t and v is not None)
    caption = f"{figure.get('title', '')}: each call of fn by the grader's clock ({sum(timed)} timed, " \
              f"{n - sum(timed)} warm-up)"
    if timed_values:
        m = len(timed_values)
        median = timed_values[m // 2] if m % 2 else (timed_values[m // 2 - 1] + timed_values[m // 2]) / 2
        mean = sum(timed_values) / m
        caption += f"; the timed calls' median is {fmt_seconds(median)}, their mean {fmt_seconds(mean)}"
    caption += f"; you reported {fmt_seconds(yours) if mine is not None else fmt(yours)}"
    if lo and hi:
        caption += f"; the grader accepts {fmt_seconds(lo)} to {fmt_seconds(hi)}"
    rows = [[str(k + 1), fmt_seconds(s), "timed" if t else "warm-up"] for k, (s, t) in enumerate(zip(seconds, timed))]
    numbers = _numbers("The numbers", _table(["call", "seconds", ""], rows))
    return width, bottom + 32, "".join(body), caption + ".", numbers


# ---------------------------------------------------------------- worst entries: a table


def _entries_caption(figure: dict) -> str:
    rows = figure.get("rows", [])
    return (f"{figure.get('title', '')}: the {len(rows)} entr{'y' if len(rows) == 1 else 'ies'} furthest off "
            f"({int(figure.get('differ_total', 0))} of {int(figure.get('total', 0))} differ).")


def _entries_html(figure: dict) -> str:
    head = [str(c) for c in figure.get("columns", ["entry", "expected", "yours", "gap"])]
    rows = [[fmt(c) for c in row[:len(head)]] for row in figure.get("rows", [])[:TABLE_ROWS]]
    if not rows:
        return ""
    return (f"<figure class='fig' data-kind='entries'>{_table(head, rows)}"
            f"<figcaption>{esc(_entries_caption(figure))}</figcaption></figure>")


_DRAW = {"grid": _grid, "loglog": _loglog, "calls": _calls}
