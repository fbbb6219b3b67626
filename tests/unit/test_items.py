"""Item statistics (reports/items.py) against numbers worked out by hand on a class of five, a planted bad check
that must be flagged, the quiz's options, and the two tables as they are written."""

from __future__ import annotations

import csv
import io
import math

import pytest

from autograder.model.results import CheckResult, GradedSubmission
from autograder.reports import items as it

QUESTION = "quiz/q01: which letter?"


def submission(sid: str, scores: dict[str, float], maxima: dict[str, float], answer: str = "",
               right: str = "") -> GradedSubmission:
    """A graded submission holding `scores` ("part/check" -> points), each check passed when it got its maximum;
    a quiz check records `answer` (chosen, "" for none) and the `right` option."""
    checks = []
    for name, got in scores.items():
        part, _, check = name.partition("/")
        quiz = name == QUESTION
        checks.append(CheckResult(part, check, maxima[name], passed=got == maxima[name],
                                  chosen=answer if quiz else "", right=right if quiz else ""))
    return GradedSubmission(sid, checks)


# A class of five, and one submission the grader could not grade (it has no score: left out).
#          masks/m1 masks/m2 scaling/s1 quiz   chose   total
#   A         1        1        2        1       b       5
#   B         1        0        2        0       c       3
#   C         0        1        0        1       b       2
#   D         0        0        0        0       a       0
#   E         1        1        0        0       c       2
MAXIMA = {"masks/m1": 1, "masks/m2": 1, "scaling/s1": 2, QUESTION: 1}
ROWS = {"A": ((1, 1, 2, 1), "b"), "B": ((1, 0, 2, 0), "c"), "C": ((0, 1, 0, 1), "b"), "D": ((0, 0, 0, 0), "a"),
        "E": ((1, 1, 0, 0), "c")}


def hand_class() -> list[GradedSubmission]:
    graded = [submission(sid, dict(zip(MAXIMA, scores)), MAXIMA, chose, "b") for sid, (scores, chose) in ROWS.items()]
    broken = submission("Z", dict.fromkeys(MAXIMA, 0.0), MAXIMA, "d", "b")
    broken.error = "the grading worker died twice"
    return graded + [broken]


def by_name(analysis: it.ItemAnalysis) -> dict[str, it.Item]:
    return {i.name: i for i in analysis.items}


def test_facility_and_discrimination_match_the_hand_worked_class():
    """By hand: r = Σ dx·dr / √(Σ dx² · Σ dr²), x the item's score, r the rest of the total, d the deviation from
    the mean over A to E.
    m1: x 1 1 0 0 1 (mean .6), rest 4 2 2 0 1 (mean 1.8): Σ dx·dr = .88+.08-.12+1.08-.32 = 1.6, Σ dx² = 1.2,
        Σ dr² = 4.84+.04+.04+3.24+.64 = 8.8, r = 1.6 / √10.56 = 0.4924.
    m2: x 1 0 1 0 1, rest 4 3 1 0 1 (mean 1.8): Σ dx·dr = .88-.72-.32+1.08-.32 = .6, Σ dr² = 10.8,
        r = .6 / √12.96 = 1/6.
    s1: x 2 2 0 0 0 (mean .8; facility 2/5 = .4), rest 3 1 2 0 2 (mean 1.6): Σ dx·dr = 1.68-.72-.32+1.28-.32 = 1.6,
        Σ dx² = 4.8, Σ dr² = 5.2, r = 1.6 / √24.96 = 0.3203.
    quiz: x 1 0 1 0 0 (mean .4), rest 4 3 1 0 2 (mean 2): Σ dx·dr = 1.2-.4-.6+.8+0 = 1, Σ dx² = 1.2, Σ dr² = 10,
        r = 1 / √12 = 0.2887."""
    analysis = it.item_analysis(hand_class())
    items = by_name(analysis)
    assert analysis.submissions == 5  # Z, a grader error, has no score
    assert list(items) == list(MAXIMA)  # in the order the checks ran
    expected = {"masks/m1": (0.6, 1.6 / math.sqrt(10.56)), "masks/m2": (0.6, 1 / 6),
                "scaling/s1": (0.4, 1.6 / math.sqrt(24.96)), QUESTION: (0.4, 1 / math.sqrt(12))}
    for name, (facility, discrimination) in expected.items():
        assert items[name].n == 5 and items[name].max_points == MAXIMA[name]
        assert items[name].mean_fraction == pytest.approx(facility)
        assert items[name].discrimination == pytest.approx(discrimination)
    assert items["masks/m1"].discrimination == pytest.approx(0.4924, abs=1e-4)
    assert items["scaling/s1"].part == "scaling"


def test_the_quiz_options_match_the_hand_worked_class():
    """Every one of A to E chose an option: a D (rest 0); b A and C (rest 4 and 1: 2.5); c B and E (rest 3 and 2:
    2.5); d nobody. All who answered: rest 10 / 5 = 2, so wrong option c's choosers (2.5) score above the class."""
    analysis = it.item_analysis(hand_class())
    options = {o.option: o for o in analysis.options}
    assert [o.question for o in analysis.options] == [QUESTION] * 4
    assert {k: (o.correct, o.chosen) for k, o in options.items()} == {
        "a": (False, 1), "b": (True, 2), "c": (False, 2), "d": (False, 0)}
    assert [options[k].share for k in "abcd"] == pytest.approx([0.2, 0.4, 0.4, 0.0])
    assert [options[k].mean_rest for k in "abc"] == pytest.approx([0.0, 2.5, 2.5])
    assert options["d"].mean_rest is None
    flags = {f.item.name: [r.kind for r in f.reasons] for f in analysis.flags}
    assert flags == {QUESTION: [it.STRONG_WRONG, it.UNCHOSEN]}  # m1, m2, s1 discriminate: nothing to say
    wrong = next(r for f in analysis.flags for r in f.reasons if r.kind == it.STRONG_WRONG)
    assert "option c" in wrong.text and "2.5" in wrong.text


def test_a_planted_check_that_passes_exactly_those_who_fail_the_rest_is_flagged():
    """Eight students of rising ability pass the four good checks in order of difficulty; the planted check
    passes exactly the two who fail every other check. Its discrimination is negative, and it is the only item
    flagged for its discrimination."""
    good = [f"tiles/good{k}" for k in range(1, 5)]
    maxima = {**dict.fromkeys(good, 1.0), "tiles/planted": 1.0}
    ability = [0, 0, 1, 2, 2, 3, 4, 4]
    graded = []
    for sid, level in enumerate(ability):
        scores = {name: float(level >= k) for k, name in enumerate(good, start=1)}
        scores["tiles/planted"] = float(level == 0)
        graded.append(submission(f"s{sid}", scores, maxima))
    analysis = it.item_analysis(graded)
    planted = by_name(analysis)["tiles/planted"]
    assert planted.discrimination is not None and planted.discrimination < -0.5
    flagged = {f.item.name: [r.kind for r in f.reasons] for f in analysis.flags}
    assert flagged == {"tiles/planted": [it.NEGATIVE]}
    assert analysis.flags[0].item.name == "tiles/planted"  # the most pressing first
    assert all(by_name(analysis)[name].discrimination > it.NEAR_ZERO for name in good)


def test_an_item_everyone_or_nobody_passes_has_no_discrimination_and_is_flagged():
    maxima = {"masks/easy": 1.0, "masks/impossible": 1.0, "masks/mixed": 1.0, "masks/other": 2.0}
    graded = [submission(f"s{k}", {"masks/easy": 1.0, "masks/impossible": 0.0, "masks/mixed": float(k % 2),
                                   "masks/other": float(2 * (k > 1))}, maxima) for k in range(4)]
    analysis = it.item_analysis(graded)
    items = by_name(analysis)
    assert items["masks/easy"].discrimination is None and items["masks/impossible"].discrimination is None
    kinds = {f.item.name: [r.kind for r in f.reasons] for f in analysis.flags}
    assert kinds["masks/easy"] == [it.EVERYONE] and kinds["masks/impossible"] == [it.NOBODY]
    assert items["masks/mixed"].discrimination == pytest.approx(0.0, abs=1e-12)
    assert kinds["masks/mixed"] == [it.WEAK]  # passing it goes with nothing else
    assert [f.item.name for f in analysis.flags][-1] == "masks/easy"  # the least pressing last


def test_a_class_under_three_has_facility_but_no_discrimination_and_no_flags():
    maxima = {"masks/a": 1.0, "masks/b": 1.0}
    graded = [submission("one", {"masks/a": 1.0, "masks/b": 0.0}, maxima),
              submission("two", {"masks/a": 0.0, "masks/b": 1.0}, maxima)]
    analysis = it.item_analysis(graded)
    assert [(i.n, i.mean_fraction, i.discrimination) for i in analysis.items] == [(2, 0.5, None), (2, 0.5, None)]
    assert analysis.flags == ()
    alone = it.item_analysis(graded[:1])
    assert alone.submissions == 1 and alone.flags == ()


def test_an_item_only_some_results_hold_counts_only_those():
    maxima = {"masks/a": 1.0, "heads/b": 1.0}
    graded = [submission(f"s{k}", {"masks/a": float(k > 0), **({"heads/b": 1.0} if k < 2 else {})}, maxima)
              for k in range(4)]
    items = by_name(it.item_analysis(graded))
    assert (items["heads/b"].n, items["masks/a"].n) == (2, 4)
    assert items["masks/a"].mean_fraction == pytest.approx(0.75)


def test_the_tables_have_the_issues_columns_and_empty_cells_where_there_is_no_value(tmp_path):
    analysis = it.write_items(hand_class(), tmp_path)
    items = list(csv.DictReader(io.StringIO((tmp_path / it.ITEMS_FILE).read_text(encoding="utf-8"))))
    options = list(csv.DictReader(io.StringIO((tmp_path / it.OPTIONS_FILE).read_text(encoding="utf-8"))))
    assert list(items[0]) == ["item", "part", "max_points", "n", "mean_fraction", "discrimination"]
    assert items[0] == {"item": "masks/m1", "part": "masks", "max_points": "1", "n": "5", "mean_fraction": "0.6",
                        "discrimination": "0.4924"}
    assert items[2]["max_points"] == "2" and items[2]["mean_fraction"] == "0.4"
    assert list(options[0]) == ["question", "option", "correct", "chosen", "share", "mean_rest"]
    assert options[3] == {"question": QUESTION, "option": "d", "correct": "no", "chosen": "0", "share": "0",
                          "mean_rest": ""}
    assert options[1]["correct"] == "yes" and options[1]["mean_rest"] == "2.5"
    assert len(analysis.items) == len(items) and len(analysis.options) == len(options)
    few = it.write_items(hand_class()[:2], tmp_path)
    assert few.submissions == 2
    assert all(row["discrimination"] == "" for row in csv.DictReader(io.StringIO(
        (tmp_path / it.ITEMS_FILE).read_text(encoding="utf-8"))))


def test_a_check_without_a_recorded_answer_has_no_options():
    maxima = {"masks/a": 1.0}
    analysis = it.item_analysis([submission(f"s{k}", {"masks/a": float(k % 2)}, maxima) for k in range(4)])
    assert analysis.options == ()
