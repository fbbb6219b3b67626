"""The served-names catalogue (autograder/engine/served.py): which names a part's submission is served, and
that a served call computes the reference's value, keeps each part's objects apart and refuses what is
not plain data."""

from __future__ import annotations

import time

import pytest
import torch

import attention_ref
from autograder import assignment
from autograder.engine import served
from autograder.isolation import wire
from autograder.isolation.proxy import ServedError, ServedHandler


def _far() -> float:
    """A deadline no call here comes near: these calls run in this process."""
    return time.monotonic() + 60


def _handlers(part: str, reference: served.Reference | None = None) -> dict[str, tuple[str, ServedHandler]]:
    """The names served while `part` is graded, computed in this process (by `reference`, else a new one), by name."""
    names = served.served_names(part, reference or served.InProcessReference(), _far)
    return {name: (kind, handler) for name, kind, handler, _ in names}


def test_a_part_is_served_every_other_parts_names_and_none_of_its_own():
    """One mistake costs points once: the other parts' names come from the reference; the part's own never do."""
    for part in assignment.PARTS:
        if not part.names:
            continue
        got = served.other_parts_names(part.name)
        others = [name for p in assignment.PARTS if p.name != part.name for name in p.names]
        assert [name for name, _ in got] == others
        assert not set(part.names) & {name for name, _ in got}


def test_each_served_name_is_the_references_and_only_classes_are_served_as_classes():
    kinds = dict(served.other_parts_names("masks"))
    assert kinds["CausalSelfAttention"] == "class"
    assert {name for name, kind in kinds.items() if kind == "class"} == {"CausalSelfAttention"}
    assert all(callable(getattr(attention_ref, name)) for name in kinds)


def test_the_quiz_is_served_nothing_and_an_unknown_part_is_refused():
    """The quiz defines no code, so grading it needs no name; a part the assignment lacks is an error, not []."""
    assert served.other_parts_names("quiz") == []
    with pytest.raises(ValueError, match="unknown part 'attention'"):
        served.other_parts_names("attention")


def test_a_served_function_gives_the_references_value_and_raises_what_it_raised():
    kind, causal_mask = _handlers("scaling")["causal_mask"]
    assert kind == "function"
    assert torch.equal(causal_mask("call", [3, 4], {}), attention_ref.causal_mask(3, 4))
    with pytest.raises(ServedError) as raised:
        causal_mask("call", [0], {})
    assert raised.value.type_name == "ValueError" and "at least 1" in raised.value.message


def test_a_served_function_cannot_be_constructed_and_a_served_class_only_called_through_its_instances():
    _, causal_mask = _handlers("scaling")["causal_mask"]
    with pytest.raises(ServedError, match="cannot be called that way"):
        causal_mask("new", [3], {})
    _, attention = _handlers("masks")["CausalSelfAttention"]
    with pytest.raises(ServedError, match="not a CausalSelfAttention made by the grader"):
        attention("call", [1, torch.zeros(1, 2, 8)], {})


def test_an_instance_made_for_one_part_is_that_parts_alone():
    """Each part's names get a scope of their own, though one reference computes them all (a worker's): a
    handle from one part's grading names nothing in another's."""
    reference = served.InProcessReference()
    _, mine = _handlers("masks", reference)["CausalSelfAttention"]
    _, theirs = _handlers("positions", reference)["CausalSelfAttention"]
    handle = mine("new", [8, 2], {})
    out, weights = mine("call", [handle, torch.zeros(1, 3, 8)], {})
    assert out.shape == (1, 3, 8) and weights.shape == (1, 2, 3, 3)
    with pytest.raises(ServedError, match="not a CausalSelfAttention made by the grader"):
        theirs("call", [handle, torch.zeros(1, 3, 8)], {})


def test_only_the_newest_instances_are_kept():
    """A submission that constructs without end holds at most MAX_INSTANCES objects in the grader."""
    _, attention = _handlers("masks")["CausalSelfAttention"]
    handles = [attention("new", [4, 1], {}) for _ in range(served.MAX_INSTANCES + 1)]
    assert len(set(handles)) == len(handles)
    with pytest.raises(ServedError, match="not a CausalSelfAttention made by the grader"):
        attention("call", [handles[0], torch.zeros(1, 2, 4)], {})
    assert attention("call", [handles[-1], torch.zeros(1, 2, 4)], {})[0].shape == (1, 2, 4)


@pytest.mark.parametrize("value", [wire.Handle(7), wire.Opaque("ndarray"), [1, (wire.Handle(7),)],
                                   {"nested": wire.Opaque("module")}])
def test_what_is_not_plain_data_is_refused_wherever_it_is_nested(value):
    _, causal_mask = _handlers("scaling")["causal_mask"]
    with pytest.raises(ServedError, match="only plain data") as raised:
        causal_mask("call", [3], {"device": value})
    assert raised.value.type_name == "TypeError"


def test_a_workload_is_served_by_its_name_and_an_unknown_name_is_an_error():
    doubled = served.workload("doubled", served.InProcessReference(), _far)
    assert torch.equal(doubled("call", [torch.tensor([1.0, -2.0])], {}), torch.tensor([2.0, -4.0]))
    unknown = served.workload("no_such_name", served.InProcessReference(), _far)
    with pytest.raises(ServedError) as raised:
        unknown("call", [1], {})
    assert raised.value.type_name == "AttributeError"


def test_the_reference_process_answers_raises_and_reports_memory_it_cannot_have():
    """The forked reference process: a value, the exception a call raised, and a call sized beyond its memory
    cap told as such, after which it still answers."""
    reference = served.ReferenceProcess()
    try:
        assert torch.equal(reference.call("s", "causal_mask", "call", [2], {}, _far()), attention_ref.causal_mask(2))
        with pytest.raises(ServedError) as raised:
            reference.call("s", "causal_mask", "call", [0], {}, _far())
        assert raised.value.type_name == "ValueError"
        with pytest.raises(ServedError, match="more memory than the grader gives a served call"):
            reference.call("s", "causal_mask", "call", [10**6], {}, _far())
        assert reference.call("s", "score_grid_bytes", "call", [4], {}, _far()) == attention_ref.score_grid_bytes(4)
    finally:
        reference.close()


def test_a_call_beyond_specs_signature_goes_to_the_students_own_function():
    """Issue 53, item 10: a student's `scaled_dot_product_attention(q, k, v, mask=None, *, is_causal=False)`, called
    with `is_causal=True` by their own heads code: while heads was graded, the stand-in refused the keyword and
    heads lost 10 of 20. A call SPEC's signature accepts is still the reference's."""
    from autograder.isolation.limits import Limits
    from autograder.isolation.proxy import Clock, InProcessChannel, Student

    code = ("def scaled_dot_product_attention(q, k, v, mask=None, *, is_causal=False):\n    return 'own', is_causal\n\n"
            "class CausalSelfAttention:\n    def __init__(self, d_model, n_heads, dropout=0.0):\n"
            "        self.dropout = dropout\n\n"
            "def causal(x):\n    return scaled_dot_product_attention(x, x, x, is_causal=True)\n\n"
            "def plain(x):\n    return scaled_dot_product_attention(x, x, x)[0]\n\n"
            "def unknown(x):\n    return scaled_dot_product_attention(x, x, x, dropout_p=0.1)\n\n"
            "def with_dropout():\n    return CausalSelfAttention(8, 2, dropout=0.5).dropout\n\n"
            "def served_module(x):\n    return CausalSelfAttention(8, 2)(x)[0].shape\n")
    student = Student(InProcessChannel(), Clock(Limits(call_seconds=5, budget_seconds=100)))
    student.load([("cell", code)], served.served_names("positions", served.InProcessReference(), _far))
    x = torch.randn(1, 3, 8)
    assert student.call("causal", x) == ("own", True)
    assert torch.equal(student.call("plain", x), attention_ref.scaled_dot_product_attention(x, x, x)[0])
    with pytest.raises(Exception, match="dropout_p"):  # what neither accepts is the student's own TypeError
        student.call("unknown", x)
    assert student.call("with_dropout") == 0.5
    assert tuple(student.call("served_module", x)) == (1, 3, 8)


def test_each_served_name_sends_specs_signature():
    spec = {name: parameters for name, _, _, parameters in served.served_names("heads", served.InProcessReference(), _far)}
    assert spec["scaled_dot_product_attention"] == [["q", "POSITIONAL_OR_KEYWORD", False], ["k", "POSITIONAL_OR_KEYWORD", False],
                                                    ["v", "POSITIONAL_OR_KEYWORD", False], ["mask", "POSITIONAL_OR_KEYWORD", True]]
    assert spec["causal_mask"][-1] == ["device", "KEYWORD_ONLY", True]
