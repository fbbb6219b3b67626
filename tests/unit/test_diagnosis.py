"""One slip, one likely mistake: the hint's catalogue words and its detail, and the root cause a part's
diagnosis finds, named by every failed check it covers (engine.checks)."""

from __future__ import annotations

import pytest
import torch

from autograder.engine import figures
from autograder.engine.checks import (Diagnosis, Failure, Hint, covering, diagnosed, expect, expect_close, fail,
                                    root_cause, some)
from autograder.model.results import CheckResult
from autograder.reports.feedback import untouched
from autograder.isolation.protocol import SandboxBreach
from autograder.text import NOT_ATTEMPTED


def failure(action) -> Failure:
    with pytest.raises(Failure) as caught:
        action()
    return caught.value


def test_a_hint_is_the_catalogues_words_and_its_detail_follows_a_dash():
    found = failure(lambda: fail("c", "e", "g", Hint("divide by √d", "the scores are not scaled")))
    assert str(found).splitlines()[-1] == "Likely mistake: divide by √d — the scores are not scaled"
    assert found.hint == "divide by √d"  # what CheckResult.hint, and the class report, hold
    assert failure(lambda: fail("c", "e", "g", "plain words")).hint == "plain words"
    assert failure(lambda: fail("c", "e", "g")).hint == "" and "Likely mistake" not in str(failure(lambda: fail("c", "e", "g")))


def test_candidates_keyed_by_hints_name_the_one_that_matches():
    want, got = torch.zeros(3), torch.ones(3)
    found = failure(lambda: expect_close(got, want, "x", candidates={Hint("a", "one way"): got * 2,
                                                                      Hint("a", "another way"): got}))
    assert found.hint == "a" and str(found).endswith("Likely mistake: a — another way")


def test_every_covered_failure_names_the_root_cause_found_once_and_only_when_needed():
    calls = []

    def probe():
        calls.append(1)
        return Hint("return wall-clock seconds", "milliseconds")

    diagnosis = Diagnosis(probe)
    with root_cause(diagnosis):
        expect(True, "c", "e", "g", "take the median")  # a passing check probes nothing
        assert calls == []
        hints = [failure(lambda h=h: expect(False, "c", "e", "g", h)) for h in ("run warm-up calls", "take the median")]
    assert calls == [1]  # once per submission
    assert {h.hint for h in hints} == {"return wall-clock seconds"}
    assert all(str(h).endswith("Likely mistake: return wall-clock seconds — milliseconds") for h in hints)
    assert failure(lambda: expect(False, "c", "e", "g", "take the median")).hint == "take the median"  # not covered


def test_without_a_root_cause_each_check_keeps_its_own_hint_and_a_note_serves_the_checks_after():
    diagnosis = Diagnosis(lambda: None, lambda: 1 / 0)  # finds nothing; a probe that breaks finds nothing either
    with root_cause(diagnosis):
        assert failure(lambda: fail("c", "e", "g", "its own")).hint == "its own"
        diagnosis.note("hold one block of scores at a time")
        assert failure(lambda: fail("c", "e", "g", "its own")).hint == "hold one block of scores at a time"


def test_the_first_diagnosis_that_finds_a_cause_wins_and_a_probes_own_failure_names_none():
    inner = []

    def probe():  # fails inside, as a probe's as_tensor would: that failure only ends the probe
        inner.append(failure(lambda: fail("probe", "e", "g", "inner")).hint)
        return "the second"

    with root_cause(Diagnosis(lambda: None), Diagnosis(probe), Diagnosis(lambda: "the third")):
        assert failure(lambda: fail("c", "e", "g", "own")).hint == "the second"
    assert inner == ["inner"]


def test_a_breach_seen_by_a_probe_is_never_swallowed():
    def probe():
        raise SandboxBreach("reached what it must not")

    with root_cause(Diagnosis(probe)), pytest.raises(SandboxBreach):
        fail("c", "e", "g", "own")


def test_checks_say_which_diagnoses_cover_them():
    @diagnosed("time_call", "time_attention")
    def test_something():
        pass

    found = {"time_call": Diagnosis(), "time_attention": Diagnosis(), "other": Diagnosis()}
    assert covering(test_something, found) == [found["time_call"], found["time_attention"]]
    assert covering(lambda: None, found) == []


def test_what_was_left_as_released_is_not_attempted_not_a_mistake():
    found = failure(lambda: expect(False, "answer_q07", "an answer", "None", Hint(NOT_ATTEMPTED, "pick an option")))
    assert found.hint == NOT_ATTEMPTED and "Likely mistake" not in str(found)
    assert str(found).splitlines()[-1] == "Not attempted yet — pick an option"
    with root_cause(Diagnosis(lambda: "a root cause")):  # never a mistake, whatever a diagnosis finds
        assert failure(lambda: expect(False, "q", "e", "g", NOT_ATTEMPTED)).hint == NOT_ATTEMPTED
    unanswered = 'set answer_q07 to one of "a", "b", "c" or "d" in its answer cell'
    assert untouched(CheckResult("quiz", "q07", 1.0, False, hint=unanswered))  # the quiz grader's own words
    assert untouched(CheckResult("masks", "causal_mask", 1.0, False, trouble="not_implemented"))
    assert not untouched(CheckResult("quiz", "q07", 1.0, False, hint="This marks the future entries"))
    assert not untouched(CheckResult("masks", "causal_mask", 1.0, False, hint=unanswered))  # only the quiz's


def test_a_list_that_is_cut_says_so():
    assert some([0.0] * 7) == "[0.0, 0.0, 0.0, 0.0, ...] (7 in all)"
    assert some([1.0, 0.5]) == "[1.0, 0.5]"
    assert some([0.123456, 2.0, 3.0, 4.0, 5.0], most=2) == "[0.1235, 2.0, ...] (5 in all)"


def test_the_message_and_the_picture_count_the_same_differing_entries():
    want = torch.zeros(3, 29, 10)
    got = want.clone()
    got[1] = 1.0  # one slice all wrong: 290 cells
    got[2, 0, 0] = 1e-7  # within the tolerance: differs from nothing
    found = failure(lambda: expect_close(got, want, "x"))
    assert "(290 of 870 entries differ" in str(found)
    (picture,) = found.figures
    assert (picture["differ_total"], picture["total"], picture["differ_all"], picture["total_all"]) == (290, 290, 290, 870)
    assert len(picture["worst"]) == figures.ENTRIES_MAX and all(w[2:] == [0.0, 1.0] for w in picture["worst"])


def test_what_was_not_attempted_names_each_function_once():
    from autograder.reports.classreport import NotAttempted

    left = NotAttempted("scaling", ("attention_scores: on 3-D inputs", "attention_weights: rows sum to 1",
                                    "attention_scores, attention_weights: on the device of q", "dot_product_spread: √d"))
    assert left.label == "attention_scores, attention_weights, dot_product_spread"
