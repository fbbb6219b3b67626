"""What a class's answers say about the questions: statistics for every check and quiz question (its items).

An item is one check as results.json names it ("<part>/<check>"), each quiz question included. Over the
graded submissions that hold it (a grader error has no score and is left out):

* `mean_fraction`, the item's facility: the mean of score / max_points;
* `discrimination`: the Pearson correlation between the item's score and the rest of the same results.json
  (the sum of every other item's score), the corrected item–total correlation. High when those who pass the
  item do well on the rest, near zero when passing it says nothing of the rest, negative when it is the
  weaker students who pass it. None below MIN_CLASS submissions, or where either side does not vary.

For a quiz question, each option: how many chose it, their share of those who chose an option, and the mean
rest of its choosers, so that a wrong option that strong students choose stands out. Options are lettered as
the hidden key and the source notebook letter them (a shuffled course shows them under other letters). What
was chosen is the grader's own reading of each answer, one of the four letters (`CheckResult.chosen`): a
submission can choose an option, never write into these statistics.

`item_analysis` is a plain function of the graded results: the class run writes its tables
(`write_items`: items.csv and quiz_options.csv beside grades.csv), the class report draws it (itemsection.py),
and a Python API can call it as it is.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..model.files import write_atomically
from ..model.results import GradedSubmission, Status
from ..quiz import OPTIONS

ITEMS_FILE = "items.csv"
OPTIONS_FILE = "quiz_options.csv"
ITEM_COLUMNS = ("item", "part", "max_points", "n", "mean_fraction", "discrimination")
OPTION_COLUMNS = ("question", "option", "correct", "chosen", "share", "mean_rest")

MIN_CLASS = 3  # submissions holding an item: below it, no discrimination and no reason to look at it
NEAR_ZERO = 0.1  # a discrimination from 0 up to this says little: passing the item barely goes with the rest
MIN_CHOOSERS = 2  # of a wrong option, before their mean counts as strong students choosing it (one is an anecdote)

# Why an item is worth a look, the most pressing first.
NEGATIVE = "negative discrimination"
STRONG_WRONG = "a wrong option strong students choose"
NOBODY = "nobody passes"
WEAK = "near-zero discrimination"
UNCHOSEN = "an option nobody chose"
EVERYONE = "everyone passes"
REASONS = (NEGATIVE, STRONG_WRONG, NOBODY, WEAK, UNCHOSEN, EVERYONE)


@dataclass(frozen=True)
class Item:
    """One check's statistics over the class (a row of items.csv)."""

    name: str  # as results.json names it: "<part>/<check>"
    part: str
    max_points: float
    n: int  # graded submissions whose results hold it
    mean_fraction: float  # facility: 1 when everyone passes, 0 when nobody does
    discrimination: float | None  # corrected item–total correlation; None: fewer than MIN_CLASS, or no spread


@dataclass(frozen=True)
class Option:
    """One option of a quiz question (a row of quiz_options.csv)."""

    question: str  # the question's item name
    option: str  # a to d, as the key letters them
    correct: bool
    chosen: int  # submissions that chose it
    share: float | None  # of the submissions that chose one of the options; None when none did
    mean_rest: float | None  # its choosers' mean score on every other item; None when nobody chose it


@dataclass(frozen=True)
class Reason:
    """Why an item is worth a look: `kind` one of REASONS, `text` the same with its numbers."""

    kind: str
    text: str


@dataclass(frozen=True)
class Flag:
    """An item to look at, and why."""

    item: Item
    reasons: tuple[Reason, ...]


@dataclass(frozen=True)
class ItemAnalysis:
    """A class's item statistics: every item in the order the checks ran, every quiz option, what to look at."""

    submissions: int  # graded submissions (grader errors left out)
    items: tuple[Item, ...]
    options: tuple[Option, ...]
    flags: tuple[Flag, ...]  # the most pressing first


def item_analysis(graded: list[GradedSubmission]) -> ItemAnalysis:
    """The item statistics of a class's graded results (see the module's docstring)."""
    scored = [g for g in graded if g.status is not Status.GRADER_ERROR]
    names: dict[str, tuple[str, float]] = {}  # item -> (part, max_points), in the order the checks ran
    for g in scored:
        for c in g.checks:
            names.setdefault(f"{c.part}/{c.name}", (c.part, c.max_score))
    column = {name: j for j, name in enumerate(names)}
    scores = np.full((len(scored), len(names)), np.nan)  # NaN: the submission's results do not hold the item
    fractions = scores.copy()
    answers: dict[str, list[tuple[int, str, str]]] = {}  # quiz item -> (row, option chosen or "", right option)
    for i, g in enumerate(scored):
        for c in g.checks:
            name = f"{c.part}/{c.name}"
            scores[i, column[name]] = c.score
            fractions[i, column[name]] = c.score / c.max_score if c.max_score else float(c.passed)
            if c.right in OPTIONS and c.chosen in ("", *OPTIONS):
                answers.setdefault(name, []).append((i, c.chosen, c.right))
    rest = np.nansum(scores, axis=1, keepdims=True) - scores  # each item's rest, per submission
    items, options, flags = [], [], []
    for name, (part, top) in names.items():
        j = column[name]
        item = _item(name, part, top, scores[:, j], fractions[:, j], rest[:, j])
        asked = _options(name, answers.get(name, []), rest[:, j])
        reasons = _score_reasons(item) + _option_reasons(asked, answers.get(name, []), rest[:, j])
        items.append(item)
        options += asked
        if reasons:
            flags.append(Flag(item, tuple(sorted(reasons, key=lambda r: REASONS.index(r.kind)))))
    flags.sort(key=lambda f: REASONS.index(f.reasons[0].kind))  # stable: in the order the checks ran within a kind
    return ItemAnalysis(len(scored), tuple(items), tuple(options), tuple(flags))


def _item(name: str, part: str, top: float, scores: np.ndarray, fractions: np.ndarray, rest: np.ndarray) -> Item:
    held = ~np.isnan(scores)
    x = scores[held]
    return Item(name, part, top, int(held.sum()), float(fractions[held].mean()) if x.size else 0.0,
                correlation(x, rest[held]) if x.size >= MIN_CLASS else None)


def correlation(x: np.ndarray, y: np.ndarray) -> float | None:
    """Pearson's r of two samples; None where either does not vary (sums of points that differ only by rounding
    do not vary)."""
    if not (_varies(x) and _varies(y)):
        return None
    return float(np.clip(np.corrcoef(x, y)[0, 1], -1.0, 1.0))


def _varies(values: np.ndarray) -> bool:
    return bool(np.ptp(values) > 1e-9 * max(1.0, float(np.abs(values).max())))


def _options(name: str, answers: list[tuple[int, str, str]], rest: np.ndarray) -> list[Option]:
    """The four options of the quiz question `name` (none for a check that records no answer): `answers` are
    its (row, option chosen or "", right option), `rest` every row's score on the other items."""
    if not answers:
        return []
    right = Counter(r for _, _, r in answers).most_common(1)[0][0]
    answered = sum(1 for _, chosen, _ in answers if chosen)
    found = []
    for letter in OPTIONS:
        rows = [i for i, chosen, _ in answers if chosen == letter]
        found.append(Option(name, letter, letter == right, len(rows), len(rows) / answered if answered else None,
                            float(rest[rows].mean()) if rows else None))
    return found


def _score_reasons(item: Item) -> list[Reason]:
    if item.n < MIN_CLASS:
        return []
    if item.mean_fraction == 1.0:
        return [Reason(EVERYONE, f"all {item.n} submissions pass it: it tells no one apart")]
    if item.mean_fraction == 0.0:
        return [Reason(NOBODY, f"none of {item.n} submissions passes it: too hard, unclear, or a check that "
                               "fails right answers")]
    d = item.discrimination
    if d is not None and d < 0:
        return [Reason(NEGATIVE, f"discrimination {d:.2f}: those who pass it do worse on the rest; is the check "
                                 "(or its key) right?")]
    if d is not None and d < NEAR_ZERO:
        return [Reason(WEAK, f"discrimination {d:.2f}: passing it says little about the rest")]
    return []


def _option_reasons(options: list[Option], answers: list[tuple[int, str, str]], rest: np.ndarray) -> list[Reason]:
    """Options nobody chose, and wrong options whose choosers do better on the rest than all who chose an
    option; nothing when fewer than MIN_CLASS chose one."""
    answered = [i for i, chosen, _ in answers if chosen]
    if len(answered) < MIN_CLASS:
        return []
    class_rest = float(rest[answered].mean())
    reasons = []
    unchosen = [o.option for o in options if not o.chosen]
    if unchosen:
        reasons.append(Reason(UNCHOSEN, f"option{'s' if len(unchosen) > 1 else ''} {', '.join(unchosen)}: none of "
                                         f"the {len(answered)} who answered"))
    for o in options:
        if not o.correct and o.chosen >= MIN_CHOOSERS and o.mean_rest is not None and o.mean_rest > class_rest:
            reasons.append(Reason(STRONG_WRONG, f"wrong option {o.option}: its {o.chosen} choosers score "
                                                f"{o.mean_rest:.3g} on the rest, all who answered {class_rest:.3g}"))
    return reasons


# ---------------------------------------------------------------- the tables


def items_csv(analysis: ItemAnalysis) -> str:
    rows = ({"item": i.name, "part": i.part, "max_points": f"{i.max_points:g}", "n": i.n,
             "mean_fraction": _number(i.mean_fraction), "discrimination": _number(i.discrimination)}
            for i in analysis.items)
    return _csv(ITEM_COLUMNS, rows)


def options_csv(analysis: ItemAnalysis) -> str:
    rows = ({"question": o.question, "option": o.option, "correct": "yes" if o.correct else "no", "chosen": o.chosen,
             "share": _number(o.share), "mean_rest": _number(o.mean_rest)} for o in analysis.options)
    return _csv(OPTION_COLUMNS, rows)


def _number(value: float | None) -> str:
    return "" if value is None else f"{round(value, 4):.10g}"


def _csv(columns: tuple[str, ...], rows) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def write_items(graded: list[GradedSubmission], out: Path) -> ItemAnalysis:
    """items.csv and quiz_options.csv in `out`, beside grades.csv; the analysis they hold."""
    analysis = item_analysis(graded)
    write_atomically(out / ITEMS_FILE, items_csv(analysis))
    write_atomically(out / OPTIONS_FILE, options_csv(analysis))
    return analysis
