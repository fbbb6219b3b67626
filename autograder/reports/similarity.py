"""Submissions whose answers are unusually alike: a section of the class report, for a human to look at.

It is a signal, never a penalty: no score changes, and the page says so ("unusually alike: worth a
look; similar code is not proof of copying"). Students solving the same small stubs write alike code;
only a person who reads both can tell copying from the obvious solution.

What is compared: each submission's answer-cell code, part by part (a part with no names, the quiz,
is a set of choices, not code, and is left out), whatever parts the run graded. A notebook's answer
cell belongs to the part its grade id names (`<part>-...`); setup cells are the release's. A .py
submission is one module: it is split into the same parts by its top-level definitions, the last
definition of each of the part's names (the one Python keeps) with the top-level helpers,
constants and classes it uses (each to the first part, in assignment order, that uses it); what no
part uses (imports, demo code) is not compared, and a module that does not parse is compared whole,
as the part "module". So a .py student and a notebook student are compared part by part too.

How: copydetect's fingerprints (https://github.com/blingenf/copydetect: the winnowing of Schleimer,
Wilkerson and Aiken, as in MOSS). Its tokeniser (Pygments) turns every variable, function, attribute
and class name into one letter and drops comments, whitespace and the contents of strings, so renamed
variables, rewritten comments and reordered helpers change nothing. Its defaults are kept: a match
shorter than 25 characters of that filtered code is noise (`NOISE_CHARS`), and the guarantee
threshold equals it, so every k-gram is a fingerprint (winnowing's window of 1); which fingerprints
are kept then never depends on the value of a hash that Python salts per process, and every run
gives the same scores. The release's own text (every code cell of the released notebooks: the
stubs' signatures and docstrings, the setup and the demo cells) is copydetect's boilerplate: its
fingerprints are removed from every submission before anything is compared, so a stub left as
released matches nothing, and a part's score counts only the code the students wrote.

Each answer cell, and each top-level definition of a module, is a piece of its own to copydetect, so
that no k-gram runs from the end of one cell into the next (every student's would end in the same
signature of the next stub). The score of a part of a pair is the share of the two sides' code
together that matches (each side's characters that match the other side's fingerprints, over its
token coverage, copydetect's numbers, summed over its pieces): a small part alike to a
piece of a large one does not make a pair alike. A pair is listed when a part scores at least the
threshold (`--similarity-threshold`, `DEFAULT_THRESHOLD`) with at least `MIN_MATCHED_CHARS`
characters matching on each side (one alike line is the obvious solution, not a sign). On the
corpus (tests/similarity_corpus.py) independent solutions of the same stubs score at most about 0.6
and disguised copies 0.8 to 1, so the default is 0.75.

Comparing every pair with copydetect's compare_files, one pair and part at a time, takes minutes for
a few hundred students. `_matches` computes the same numbers for every pair of a
part at once with numpy (from copydetect's fingerprints and their positions: no winnowing of our
own), and compare_files is called only for the pairs shown side by side, for where their matching
regions are. tests/benchmarks/similarity.py measures it; tests/test_similarity.py checks that both
give the same numbers.

Why copydetect: of the tools that implement winnowing, it is the Python one with a tokeniser and a
boilerplate mechanism, MIT-licensed, on PyPI (0.5.0, 2024), and its dependencies (numpy, Pygments,
Jinja2, matplotlib, tqdm) are this package's already. Dolos (maintained, tree-sitter based, the best
of them) is a Node.js program, a second runtime on every grading machine; pycode-similar compares
ASTs (no boilerplate, last released 2020); `winnowing` is the bare algorithm, without a tokeniser or
boilerplate; diffinite (winnowing too) is made for forensic PDF reports and brings reportlab,
xhtml2pdf and pypdf.
"""

from __future__ import annotations

import ast
import bisect
import html
import io
import json
import sys
import time
import types
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Mapping, Sequence
from urllib.parse import quote

from .. import assignment, releases
from ..versions import patches_apply

if TYPE_CHECKING:
    import numpy as np

Cell = tuple[str, str]  # (label, code), as model.submission reads them

DEFAULT_THRESHOLD = 0.75  # a part's score at or above which a pair is listed
MIN_MATCHED_CHARS = 100  # ... over at least this many characters of filtered code on each side (some 5 lines)
NOISE_CHARS = 25  # copydetect's noise threshold (its default): a match shorter than this, in filtered code, is noise
MODULE_PART = "module"  # a .py submission that does not parse is compared whole, under this name
MAX_PART_CHARS = 64_000  # a part's code beyond this is not compared (the limit keeps a hostile one cheap)
SHOWN_PAIRS = 12  # pairs shown side by side; the others are listed with their scores
LISTED_PAIRS = 500  # pairs listed at all
SHOWN_LINES = 6  # lines of context kept around the matching regions in a side-by-side view

NOTE = "Unusually alike: worth a look; similar code is not proof of copying."

esc = html.escape

STYLE = """
.sbs{display:grid;grid-template-columns:1fr 1fr;gap:.6em;margin:.3em 0 1em}
.sbs pre{margin:0;padding:.4em;background:#fafafa;border:1px solid #ddd;font-size:.78em;line-height:1.45;overflow-x:auto;
white-space:pre-wrap;word-break:break-all}.sbs h3{margin:.2em 0;font-size:.9em}
.sbs mark{background:#ffe08a}td.alike{background:#fff3cd}
"""


# ---------------------------------------------------------------- each submission's code, per part


def code_parts() -> tuple[str, ...]:
    """The parts whose answers are code: those that define names (not the quiz)."""
    return tuple(p.name for p in assignment.PARTS if p.names)


def part_code(cells: Mapping[str, Sequence[Cell]]) -> dict[str, list[str]]:
    """A submission's answer code per part, from its cells (notebook -> (label, code)), as the pieces
    compared: a notebook's answer cells, each to the part its grade id names (setup cells left out),
    and a .py module's top-level definitions, each to its part (`split_module`). Each piece starts with
    a comment that says where it is from; a part's pieces hold at most `MAX_PART_CHARS` characters."""
    parts = set(code_parts())
    found: dict[str, list[str]] = {}
    modules: list[Cell] = []
    for notebook, notebook_cells in cells.items():
        prefix = f"{notebook}.ipynb, cell "
        for label, code in notebook_cells:
            if label.startswith(prefix):
                part, dash, _ = label[len(prefix):].partition("-")
                if part in parts and dash:
                    found.setdefault(part, []).append(f"# {label}\n{code}")
            elif (label, code) not in modules:  # a .py module is every notebook's cells: once
                modules.append((label, code))
    for label, code in modules:
        for part, pieces in split_module(code, label).items():
            found.setdefault(part, []).extend(pieces)
    kept: dict[str, list[str]] = {}
    for part, pieces in found.items():
        left = MAX_PART_CHARS
        for piece in pieces:
            if left > 0:
                kept.setdefault(part, []).append(_normalise(piece[:left]))
                left -= len(piece)
    return kept


def joined(pieces: Sequence[str]) -> str:
    """A part's pieces as one text, as the page shows it."""
    return "\n".join(pieces)


def split_module(code: str, label: str = "module") -> dict[str, list[str]]:
    """A module's top-level definitions per part: the last definition of each of the part's names and
    the top-level helpers they use, each to the first part that uses it; the whole module under
    `MODULE_PART` when it does not parse."""
    code = code.replace("\r\n", "\n").replace("\r", "\n")  # the line ends ast counts (not str.splitlines')
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {MODULE_PART: [f"# {label}\n{code}"]}
    lines = code.split("\n")
    defined: dict[str, ast.stmt] = {}
    for node in tree.body:
        for name in _defines(node):
            defined[name] = node  # the last one is the one Python keeps
    owner: dict[int, str] = {}  # id(node) -> part
    part_names = {name for p in assignment.PARTS for name in p.names}
    for part in code_parts():
        todo = [defined[n] for n in assignment.part(part).names if n in defined]
        while todo:
            node = todo.pop()
            if id(node) in owner:
                continue
            owner[id(node)] = part
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            todo += [defined[n] for n in used if n in defined and n not in part_names]
    texts: dict[str, list[str]] = {}
    for node in tree.body:
        if id(node) in owner:
            start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            end = node.end_lineno or node.lineno
            texts.setdefault(owner[id(node)], []).append(
                f"# {label}, lines {start}-{end}\n" + "\n".join(lines[start - 1:end]))
    return texts


def _defines(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _normalise(text: str) -> str:
    """Text as Pygments reads it (one kind of line end, no leading or trailing blank line, a last line
    end), so that copydetect's positions in it are positions in what the page shows."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip("\n") + "\n"


# ---------------------------------------------------------------- fingerprints


def release_text(release: releases.Release | None = None) -> tuple[str, ...]:
    """The code of every code cell of the released notebooks graded against (`release`; None: the grader's
    own): the stubs, setup and demo cells."""
    return _release_text(releases.or_own(release))


@lru_cache(maxsize=4)
def _release_text(release: releases.Release) -> tuple[str, ...]:
    found = []
    for notebook in assignment.NOTEBOOKS:
        try:
            cells = json.loads(release.notebook(notebook) or b"")["cells"]
        except (ValueError, KeyError, TypeError):
            continue
        for cell in cells:
            if cell.get("cell_type") == "code":
                source = cell.get("source", "")
                found.append(_normalise("".join(source) if isinstance(source, list) else str(source)))
    return tuple(found)


def boilerplate(noise: int = NOISE_CHARS, release: releases.Release | None = None):
    """copydetect's boilerplate hashes of the release's text (as its CopyDetector computes them)."""
    return _boilerplate(release_text(release), noise)


@lru_cache(maxsize=4)
def _boilerplate(texts: tuple[str, ...], noise: int):
    import numpy as np
    CodeFingerprint = _copydetect().CodeFingerprint

    hashes = [h for text in texts
              for h in CodeFingerprint("release.py", noise, 1, filter=True, language="python",
                                       fp=io.StringIO(text)).hashes]
    return np.unique(np.array(hashes, dtype=np.int64))


def fingerprint(text: str, noise: int = NOISE_CHARS, boiler=None):
    """copydetect's fingerprint of one piece of code (an answer cell, a definition), the release's
    boilerplate left out."""
    CodeFingerprint = _copydetect().CodeFingerprint

    return CodeFingerprint("part.py", noise, 1, boilerplate=boilerplate(noise) if boiler is None else boiler,
                           filter=True, language="python", fp=io.StringIO(text))


# ---------------------------------------------------------------- comparing


@dataclass
class PartMatch:
    """How alike two submissions' code of one part is, in copydetect's numbers: how many characters of
    each side's filtered code match the other's, of how many that count (its token coverage)."""

    part: str
    matched: tuple[int, int]
    coverage: tuple[int, int]

    @property
    def fractions(self) -> tuple[float, float]:
        """The share of each side's own code that matches the other's (copydetect's two similarities)."""
        return (self.matched[0] / max(1, self.coverage[0]), self.matched[1] / max(1, self.coverage[1]))

    @property
    def score(self) -> float:
        """The share of the two sides' code together that matches: a small part alike to a piece of a
        large one is not a pair alike."""
        return sum(self.matched) / max(1, sum(self.coverage))

    def alike(self, threshold: float, min_matched: int = MIN_MATCHED_CHARS) -> bool:
        return self.score >= threshold - 1e-9 and min(self.matched) >= min_matched


@dataclass
class SideBySide:
    """One part of a pair side by side: where the matching regions are in each side's code."""

    spans: tuple[list[tuple[int, int]], list[tuple[int, int]]]  # (start, end) in each side's text
    lines: tuple[int, int]  # the lines each side's matching regions touch


@dataclass
class Pair:
    """Two submissions with at least one part unusually alike."""

    a: str
    b: str
    parts: dict[str, PartMatch]  # every part both have code for
    alike: list[str]  # the parts at or above the threshold, most alike first
    views: dict[str, SideBySide] = field(default_factory=dict)  # of the alike parts, for the pairs shown side by side

    @property
    def score(self) -> float:
        return max(self.parts[p].score for p in self.alike)


@dataclass
class Similarity:
    """What the class report's section shows: the pairs, and what was compared."""

    threshold: float
    pairs: list[Pair] = field(default_factory=list)  # the most alike first, at most LISTED_PAIRS
    found: int = 0  # pairs alike, listed or not
    submissions: int = 0  # with code to compare
    parts: tuple[str, ...] = ()
    texts: dict[str, dict[str, str]] = field(default_factory=dict)  # id -> part -> code, of the pairs shown
    seconds: float = 0.0
    min_matched: int = MIN_MATCHED_CHARS
    error: str = ""  # why nothing could be compared

    def html(self) -> str:
        return section_html(self)


@lru_cache(maxsize=None)
def _copydetect():
    """copydetect, loaded with a stand-in for the matplotlib.pyplot it imports for the plots of its own
    HTML report, which nothing here makes: pyplot's first import writes matplotlib's font cache and
    configuration into the grader's home, and is slow. Only with the copydetect this was written for
    (`versions.WRITTEN_FOR`); with another, or where pyplot is loaded already, copydetect gets pyplot."""
    stand_ins = {} if "matplotlib.pyplot" in sys.modules or not patches_apply("copydetect") else \
        {name: types.ModuleType(name) for name in ("matplotlib", "matplotlib.pyplot") if name not in sys.modules}
    sys.modules.update(stand_ins)
    try:
        import copydetect
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
    return copydetect


def find_similar_or_why(cells: Mapping[str, Mapping[str, Sequence[Cell]]], threshold: float = DEFAULT_THRESHOLD,
                        release: releases.Release | None = None) -> Similarity:
    """`find_similar`, or why it could not run: a signal for a human never stops a run from writing its
    report."""
    try:
        return find_similar(cells, threshold, release=release)
    except ImportError as exc:
        return Similarity(threshold, error=f"copydetect could not be imported ({exc}): install the package's "
                                           "requirements (requirements.lock)")
    except Exception as exc:  # noqa: BLE001 - whatever went wrong, the report is still written
        return Similarity(threshold, error=f"{type(exc).__name__}: {exc}")


def find_similar(cells: Mapping[str, Mapping[str, Sequence[Cell]]], threshold: float = DEFAULT_THRESHOLD,
                 min_matched: int = MIN_MATCHED_CHARS, noise: int = NOISE_CHARS,
                 release: releases.Release | None = None) -> Similarity:
    """The pairs of submissions (id -> their cells, as `Submission.cells`) whose code of some part is
    unusually alike: copydetect's score at least `threshold`, over at least `min_matched` characters
    of filtered code on each side; what `release` (None: the grader's own) wrote is nobody's."""
    release = releases.or_own(release)
    import numpy as np

    started = time.perf_counter()
    texts = {sid: part_code(c) for sid, c in sorted(cells.items())}
    texts = {sid: t for sid, t in texts.items() if t}
    ids = list(texts)
    parts = tuple(p for p in (*code_parts(), MODULE_PART) if any(p in t for t in texts.values()))
    if len(ids) < 2:  # one upload (Gradescope): nothing to compare, nothing to import
        return Similarity(threshold, submissions=len(ids), parts=parts, seconds=time.perf_counter() - started,
                          min_matched=min_matched)
    boiler = boilerplate(noise, release)
    cache: dict[str, object] = {}  # the same text (an untouched stub, a resubmitted copy) is fingerprinted once

    def fp(text: str):
        if text not in cache:
            cache[text] = fingerprint(text, noise, boiler)
        return cache[text]

    prints = {sid: {p: [fp(piece) for piece in pieces] for p, pieces in texts[sid].items()} for sid in ids}
    scored = {}  # part -> (index of each submission holding it, matched, coverage)
    alike_pairs: set[tuple[int, int]] = set()
    for part in parts:
        holders = [k for k, sid in enumerate(ids) if any(f.hashes for f in prints[sid].get(part, ()))]
        matched, coverage = _matches([prints[ids[k]][part] for k in holders], noise)
        score = (matched + matched.T) / np.maximum(1, coverage[:, None] + coverage[None, :])
        alike = (score >= threshold - 1e-9) & (np.minimum(matched, matched.T) >= min_matched)
        alike_pairs.update((holders[a], holders[b]) for a, b in zip(*(x.tolist() for x in np.nonzero(np.triu(alike, 1)))))
        scored[part] = ({k: n for n, k in enumerate(holders)}, matched, coverage)
    matches: dict[tuple[int, int], dict[str, PartMatch]] = {}
    for i, j in sorted(alike_pairs):  # every part of an alike pair, for its row of scores
        found = matches.setdefault((i, j), {})
        for part, (index, matched, coverage) in scored.items():
            if i in index and j in index:
                a, b = index[i], index[j]
                found[part] = PartMatch(part, (int(matched[a, b]), int(matched[b, a])),
                                        (int(coverage[a]), int(coverage[b])))
    pairs = []
    for (i, j), found in matches.items():
        alike = sorted((p for p, m in found.items() if m.alike(threshold, min_matched)), key=lambda p: -found[p].score)
        if alike:
            pairs.append(Pair(ids[i], ids[j], {p: found[p] for p in parts if p in found}, alike))
    pairs.sort(key=lambda p: (-len(p.alike), -p.score, p.a, p.b))
    count, pairs = len(pairs), pairs[:LISTED_PAIRS]
    shown = {sid: {p: joined(pieces) for p, pieces in texts[sid].items()}
             for sid in {sid for pair in pairs[:SHOWN_PAIRS] for sid in (pair.a, pair.b)}}
    for pair in pairs[:SHOWN_PAIRS]:  # where the regions are: copydetect's own comparisons of the pieces
        for part in pair.alike:
            regions = _regions(prints[pair.a][part], prints[pair.b][part], texts[pair.a][part], texts[pair.b][part])
            spans = (_students_own(shown[pair.a][part], regions[0], release),
                     _students_own(shown[pair.b][part], regions[1], release))
            pair.views[part] = SideBySide(spans, (_lines(shown[pair.a][part], spans[0]), _lines(shown[pair.b][part], spans[1])))
    return Similarity(threshold, pairs, count, len(ids), parts, shown, time.perf_counter() - started, min_matched)


def _regions(prints_a: list, prints_b: list, pieces_a: Sequence[str], pieces_b: Sequence[str]):
    """Where two parts' code matches, in each part's joined text: copydetect's compare_files of every
    piece of one with every piece of the other, its slices put together."""
    compare_files = _copydetect().compare_files

    starts_a, starts_b = _starts(pieces_a), _starts(pieces_b)
    spans_a: list[tuple[int, int]] = []
    spans_b: list[tuple[int, int]] = []
    for _x, fx, ox in zip(pieces_a, prints_a, starts_a):
        for _y, fy, oy in zip(pieces_b, prints_b, starts_b):
            if fx.hashes & fy.hashes:
                _, _, (sx, sy) = compare_files(fx, fy)
                spans_a += [(ox + s, ox + e) for s, e in _spans(sx)]
                spans_b += [(oy + s, oy + e) for s, e in _spans(sy)]
    return _union(spans_a), _union(spans_b)


@lru_cache(maxsize=4)
def release_prose(release: releases.Release) -> frozenset[str]:
    """What the release wrote that every student keeps and copydetect's filter does not see as code of its
    own: each docstring and comment of its code cells, and each line of its functions' and classes'
    signatures (`_plain`, whitespace aside). Its fingerprints are boilerplate already; but a match of a
    student's code next to it, which a k-gram across both carries, spreads over it in the side-by-side
    view: a docstring is one character of copydetect's filtered code and its whole text on the page."""
    found = set()
    for text in release_text(release):
        for _, kind, value in _tokens(text):
            if _is_prose(kind):
                found.add(_plain(value))
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        lines = text.split("\n")
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
                found.update(_plain(line) for line in lines[node.lineno - 1:node.body[0].lineno - 1])
    found.discard("")
    return frozenset(found)


def _tokens(text: str):
    """(position, kind, text) of each of Pygments' Python tokens of `text` (copydetect's tokeniser)."""
    from pygments.lexers import PythonLexer

    return PythonLexer().get_tokens_unprocessed(text)


def _is_prose(kind) -> bool:
    from pygments.token import Comment, String

    return kind in String.Doc or kind in Comment


def _plain(text: str) -> str:
    return " ".join(text.split())


@lru_cache(maxsize=64)
def _release_prose_in(text: str, release: releases.Release) -> tuple[tuple[int, int], ...]:
    """Where `text` holds what the release wrote (`release_prose`), as sorted, disjoint (start, end); once per
    text, since a student's part is in as many shown pairs as it is alike to, and untouched or copied parts
    repeat."""
    ours = release_prose(release)
    cut = [(at, at + len(value)) for at, kind, value in _tokens(text) if _is_prose(kind) and _plain(value) in ours]
    at = 0
    for line in text.split("\n"):
        if _plain(line) in ours:
            start = at + len(line) - len(line.lstrip())
            cut.append((start, at + len(line.rstrip())))
        at += len(line) + 1
    return tuple(_union(cut))


def _students_own(text: str, spans: list[tuple[int, int]], release: releases.Release) -> list[tuple[int, int]]:
    """`spans` of `text` without what the release wrote (`release_prose`: its docstrings, comments and
    signature lines), each trimmed of blanks: the matching regions the page marks. One pass over both sorted
    lists: a student's code may hold the release's lines thousands of times."""
    if not spans:
        return spans
    cuts = _release_prose_in(text, release)
    pieces, first = [], 0  # first: the first cut that may reach into the span at hand
    for start, end in sorted(spans):
        while first < len(cuts) and cuts[first][1] <= start:
            first += 1
        at, i = start, first
        while i < len(cuts) and cuts[i][0] < end:
            if cuts[i][0] > at:
                pieces.append((at, cuts[i][0]))
            at = max(at, cuts[i][1])
            i += 1
        if at < end:
            pieces.append((at, end))
    kept = []
    for s, e in pieces:
        piece = text[s:e]
        s, e = s + len(piece) - len(piece.lstrip()), e - (len(piece) - len(piece.rstrip()))
        if e > s:
            kept.append((s, e))
    return _union(kept)


def _starts(pieces: Sequence[str]) -> list[int]:
    """Where each piece starts in `joined(pieces)`."""
    starts, at = [], 0
    for piece in pieces:
        starts.append(at)
        at += len(piece) + 1
    return starts


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _matches(docs: list[list], noise: int) -> tuple["np.ndarray", "np.ndarray"]:
    """M[i, j]: how many characters of i's filtered code match j's, for every pair at once, and C[i]:
    how many count in i (its token coverage); each document is a part's pieces (copydetect fingerprints).
    M[i, j] is the sum over i's pieces of the number copydetect's compare_files computes for the piece
    against j (the total length of its slices: the k-grams at each fingerprint position whose hash j
    holds too), and M[i, j] / C[i] compare_files' similarity; computed with numpy over all pairs
    together instead of one pair at a time, which would take two minutes for 400 students.

    Each position of i that matches j covers the characters up to the next one that does, at most
    `noise` of them: so with every piece's positions offset to follow the previous one's with a gap of
    at least `noise`, all the pieces of all the documents are handled side by side, a block at a time."""
    import numpy as np

    n = len(docs)
    matched = np.zeros((n, n), dtype=np.int64)
    coverage = np.array([sum(int(fp.token_coverage) for fp in doc) for doc in docs], dtype=np.int64)
    if n < 2:
        return matched, coverage
    positions, hashes = [], []
    for doc in docs:
        pos_parts, hash_parts, offset = [], [], 0
        for fp in doc:
            pos_parts.append(np.fromiter((p for ps in fp.hash_idx.values() for p in ps), dtype=np.int64) + offset)
            hash_parts.append(np.fromiter((h for h, ps in fp.hash_idx.items() for _ in ps), dtype=np.int64,
                                          count=len(pos_parts[-1])))
            offset += len(fp.filtered_code) + 2 * noise
        pos, hs = np.concatenate(pos_parts), np.concatenate(hash_parts)
        order = np.argsort(pos, kind="stable")
        positions.append(pos[order])
        hashes.append(hs[order])
    unique_per_doc = [np.unique(h) for h in hashes]
    values, held = np.unique(np.concatenate(unique_per_doc), return_counts=True)
    shared = values[held >= 2]  # only a fingerprint two documents hold can match
    if not len(shared):
        return matched, coverage
    holds = np.zeros((n, len(shared)), dtype=bool)
    columns = []
    for i, (h, u) in enumerate(zip(hashes, unique_per_doc)):
        k = np.searchsorted(shared, u)
        ok = (k < len(shared)) & (shared[np.minimum(k, len(shared) - 1)] == u)
        holds[i, k[ok]] = True
        c = np.searchsorted(shared, h)
        keep = (c < len(shared)) & (shared[np.minimum(c, len(shared) - 1)] == h)
        columns.append((positions[i][keep], c[keep]))
    budget = max(1, 2**22 // n)  # positions per block: blocks of at most 4M cells (16 MiB of int32)
    i = 0
    while i < n:
        block, width = [i], len(columns[i][0])
        while block[-1] + 1 < n and width + len(columns[block[-1] + 1][0]) <= budget:
            block.append(block[-1] + 1)
            width += len(columns[block[-1]][0])
        i = block[-1] + 1
        offset, pos_parts, col_parts, starts = 0, [], [], []
        for d in block:
            pos, col = columns[d]
            starts.append(sum(len(p) for p in pos_parts))
            pos_parts.append(pos + offset)
            col_parts.append(col)
            offset += int(pos[-1]) + 2 * noise if len(pos) else 0
        pos, col = np.concatenate(pos_parts).astype(np.int32), np.concatenate(col_parts)
        if not len(pos):
            continue
        hit = holds[:, col]  # (every j, each position of these documents): j holds its fingerprint
        never = np.iinfo(np.int32).max
        at = np.where(hit, pos, never)
        following = np.minimum.accumulate(at[:, ::-1], axis=1)[:, ::-1]
        following = np.concatenate([following[:, 1:], np.full((n, 1), never, dtype=np.int32)], axis=1)
        covered = np.where(hit, np.minimum(noise, following - pos), 0)
        nonempty = [s for s, p in zip(starts, pos_parts) if len(p)]
        sums = np.add.reduceat(covered, nonempty, axis=1)  # (j, document)
        for column, d in enumerate(d for d, p in zip(block, pos_parts) if len(p)):
            matched[d] = sums[:, column]
    np.fill_diagonal(matched, 0)
    return matched, coverage


def _spans(slices) -> list[tuple[int, int]]:
    if len(slices) == 0 or len(slices[0]) == 0:
        return []
    return [(int(s), int(e)) for s, e in zip(slices[0], slices[1])]


def _lines(text: str, spans: list[tuple[int, int]]) -> int:
    """How many lines of `text` the spans touch (lines with nothing but blanks not counted)."""
    touched = set()
    for start, end in spans:
        first = text.count("\n", 0, start)
        for k, line in enumerate(text[start:end].split("\n")):
            if line.strip():
                touched.add(first + k)
    return len(touched)


# ---------------------------------------------------------------- the section


def section_html(similarity: Similarity) -> str:
    """The class report's section: the pairs, their scores per part, and the matching regions side by
    side, escaped (the code is the students' own); no script, nothing fetched."""
    s = similarity
    out = ["<h2 id='similar'>Submissions unusually alike</h2>",
           f"<p class='lead'><b>{esc(NOTE)}</b> This changes no score. Students solving the same stubs write "
           "alike code: only someone who reads both can tell copying from the obvious solution.</p>",
           f"<p class='muted'>{s.submissions} submission{'s' if s.submissions != 1 else ''} with code, compared "
           f"part by part ({esc(', '.join(s.parts) or 'none')}; the quiz is choices, not code) with copydetect's "
           "winnowing fingerprints: names, comments, the contents of strings and the layout do not count, nor "
           "does the release's own text (stubs, docstrings, starter code). A part's score is the share of the two "
           "sides' code together that matches the other side's; a pair is listed when a part scores at least "
           f"{s.threshold:.0%} with at least {s.min_matched} characters of code (names and layout set aside) "
           "matching on each side (<code>--similarity-threshold</code>; "
           f"<code>--no-similarity</code> leaves this section out). Took {s.seconds:.1f} s.</p>"]
    if s.error:
        out.append(f"<p id='similar-error' class='low'>Not compared: {esc(s.error[:500])}.</p>")
        return "\n".join(out)
    if not s.pairs:
        out.append("<p id='similar-none'>None: no two submissions are unusually alike.</p>")
        return "\n".join(out)
    more = f" (the {len(s.pairs)} most alike listed)" if s.found > len(s.pairs) else ""
    out.append(f"<p>{s.found} pair{'s' if s.found != 1 else ''} unusually alike{more}, the most alike parts first; "
               "each cell is the part's score (hover for both sides' shares).</p>")
    head = ("<tr><th>submissions</th><th>alike parts</th>" + "".join(f"<th>{esc(p)}</th>" for p in s.parts)
            + "</tr>")
    rows = []
    for k, pair in enumerate(s.pairs):
        cells = []
        for p in s.parts:
            m = pair.parts.get(p)
            if m is None:
                cells.append("<td class='n muted'>—</td>")
                continue
            cls = "n alike" if p in pair.alike else "n"
            cells.append(f"<td class='{cls}' data-part='{esc(p)}' data-score='{m.score:.3f}' title='{esc(pair.a)}: "
                         f"{m.fractions[0]:.0%} of its code, {esc(pair.b)}: {m.fractions[1]:.0%}'>{m.score:.0%}</td>")
        who = f"{_student(pair.a)} and {_student(pair.b)}"
        if k < SHOWN_PAIRS:
            who += f" <a href='#pair-{k + 1}'>side by side</a>"
        rows.append(f"<tr class='similar-pair' data-a='{esc(pair.a)}' data-b='{esc(pair.b)}' "
                    f"data-score='{pair.score:.3f}' data-parts='{esc(' '.join(pair.alike))}'><td>{who}</td>"
                    f"<td>{esc(', '.join(pair.alike))}</td>{''.join(cells)}</tr>")
    out.append(f"<table id='similar-pairs'>{head}{''.join(rows)}</table>")
    for k, pair in enumerate(s.pairs[:SHOWN_PAIRS]):
        out.append(f"<details id='pair-{k + 1}' class='similar-view' data-a='{esc(pair.a)}' data-b='{esc(pair.b)}'"
                   f"{' open' if k < 3 else ''}><summary>{esc(pair.a)} and {esc(pair.b)}: "
                   f"{esc(', '.join(pair.alike))} (most alike {pair.score:.0%}); the matching regions are "
                   "marked</summary>")
        for p in pair.alike:
            m, view = pair.parts[p], pair.views[p]
            out.append(f"<div class='sbs' data-part='{esc(p)}'>"
                       + _side(pair.a, p, s.texts[pair.a][p], view.spans[0], m.fractions[0], view.lines[0])
                       + _side(pair.b, p, s.texts[pair.b][p], view.spans[1], m.fractions[1], view.lines[1])
                       + "</div>")
        out.append("</details>")
    if len(s.pairs) > SHOWN_PAIRS:
        out.append(f"<p class='muted'>Side by side: the first {SHOWN_PAIRS} pairs.</p>")
    return "\n".join(out)


def _side(sid: str, part: str, text: str, spans: list[tuple[int, int]], fraction: float, lines: int) -> str:
    return (f"<div><h3>{esc(sid)}, {esc(part)}: {fraction:.0%} of its code alike, {lines} "
            f"line{'s' if lines != 1 else ''}</h3><pre>{highlighted(text, spans)}</pre></div>")


def highlighted(text: str, spans: list[tuple[int, int]], context: int = SHOWN_LINES) -> str:
    """`text`, escaped, its spans in <mark>, lines further than `context` from any span elided."""
    spans = sorted((max(0, a), min(len(text), b)) for a, b in spans if b > a)
    keep: set[int] = set()
    line_of = [0] + [k + 1 for k, ch in enumerate(text) if ch == "\n"]  # where each line starts
    for a, b in spans:
        first, last = bisect.bisect_right(line_of, a) - 1, bisect.bisect_right(line_of, max(a, b - 1)) - 1
        keep.update(range(max(0, first - context), last + context + 1))
    marked, at = [], 0
    for a, b in spans:
        if a < at:
            a = at
        if b <= a:
            continue
        marked.append(esc(text[at:a]))
        marked.append("<mark>" + esc(text[a:b]).replace("\n", "</mark>\n<mark>") + "</mark>")
        at = b
    marked.append(esc(text[at:]))
    lines = "".join(marked).split("\n")
    out, skipped = [], False
    for k, line in enumerate(lines):
        if k in keep or not spans:
            out.append(line)
            skipped = False
        elif not skipped:
            out.append("<span class='muted'>…</span>")
            skipped = True
    return "\n".join(out).rstrip("\n")


def _student(sid: str) -> str:
    return f"<a href='{esc(quote(sid))}/feedback.html'>{esc(sid)}</a>"
