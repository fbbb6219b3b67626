"""The students' self-checks agree with the graders (issue 59, item 5): a self-check that fails because a
function it calls is wrong names that function as the likely cause, not the one it checks (the graders test
each part with the other parts' reference functions; a student's file holds no reference code, so the
self-check runs the callee's own self-check instead). Its hints are the catalogue's."""

from __future__ import annotations

import importlib.util
import types

import pytest

from autograder import assignment
from autograder.hints import hint

ROOT = assignment.CHECKOUT_ROOT
pytestmark = pytest.mark.skipif(ROOT is None, reason="needs the project's checkout (assignments/)")


@pytest.fixture(scope="module")
def selfcheck():
    spec = importlib.util.spec_from_file_location("selfcheck", ROOT / "assignments" / "attention" / "selfcheck.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def notebook(patch: str = "") -> types.ModuleType:
    """A student's notebook: the corpus's correct submission, then `patch` (their own version of a function)."""
    module = types.ModuleType("__main__")
    base = (ROOT / "tests" / "corpus" / "base.py").read_text(encoding="utf-8")
    exec(compile(base + "\n\n" + patch, "notebook", "exec"), module.__dict__)  # our own test code
    return module


def said(selfcheck, capsys, name: str, student: types.ModuleType) -> str:
    getattr(selfcheck, f"check_{name}")(getattr(student, name))
    return capsys.readouterr().out.strip()


FILL_ZERO = (ROOT / "tests" / "corpus" / "buggy" / "masks_fill_zero.py").read_text(encoding="utf-8") if ROOT else ""
WEIGHTS_OVER_QUERIES = '''
def attention_weights(scores, mask=None):
    if mask is not None:
        scores = apply_mask(scores, mask)
    return torch.softmax(scores, dim=-2)
'''


def test_a_wrong_function_of_another_section_is_named_as_the_cause(selfcheck, capsys):
    student = notebook(FILL_ZERO)
    assert hint("masks.fill_zero") in said(selfcheck, capsys, "apply_mask", student)
    line = said(selfcheck, capsys, "scaled_dot_product_attention", student)
    assert line.startswith("✘ scaled_dot_product_attention:"), line
    assert ("Likely cause: apply_mask, which scaled_dot_product_attention calls (through attention_weights), fails "
            "its own self-check: fix apply_mask first; the graded tests of scaled_dot_product_attention use a "
            "correct apply_mask") in line
    assert "Likely mistake" not in line and "pass the mask" not in line


def test_a_wrong_function_of_the_same_section_is_named_too(selfcheck, capsys):
    line = said(selfcheck, capsys, "scaled_dot_product_attention", notebook(WEIGHTS_OVER_QUERIES))
    assert "Likely cause: attention_weights, which scaled_dot_product_attention calls, fails its own self-check: " \
           "fix attention_weights first; then run this check again" in line


def test_a_function_wrong_itself_gets_its_own_likely_mistake(selfcheck, capsys):
    unscaled = "def attention_scores(q, k):\n    return q @ k.transpose(-2, -1)\n"
    student = notebook(unscaled)
    line = said(selfcheck, capsys, "attention_scores", student)
    assert f"Likely mistake: {hint('scaling.no_scale')}" in line and "Likely cause" not in line
    assert said(selfcheck, capsys, "apply_mask", student).startswith("✔")
    assert said(selfcheck, capsys, "scaled_dot_product_attention", notebook()).startswith("✔")


def test_what_is_left_still_lists_each_function_once(selfcheck):
    left = selfcheck.what_is_left("scaling", vars(notebook(FILL_ZERO)))
    assert "not right yet (✘): attention_weights, scaled_dot_product_attention" in left
    assert selfcheck.results["apply_mask"] is False  # found on the way, and remembered
