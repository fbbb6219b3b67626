"""A cell turned into Python by IPython's own transformer, within a budget of what the grader's process reads."""

from __future__ import annotations

import pytest
from IPython.core import inputtransformer2

from autograder.model import jupyter


@pytest.mark.parametrize("cell", [
    "if (\n    a\n    != b\n):\n    pass\n",  # black's continuation lines: Python, left as they are
    "y = (\n    7\n    % 2\n)\n",
    "!pip install a \\\n    b\ndef f():\n    return 1\n",
    "torch.tril?\nx = 1\n",
    "res = %timeit -o f()\n",
    "x = !ls\n",
    "    x = 1\n    y = 2\n",  # an indented first line: IPython takes the indent off
])
def test_a_cell_is_the_python_ipython_makes_of_it(cell):
    assert jupyter.Turner().python(cell) == (inputtransformer2.TransformerManager().transform_cell(cell), "")


def test_plain_python_is_left_as_written():
    assert jupyter.Turner().python("def f(): pass") == ("def f(): pass", "")


def _read_bytes(monkeypatch) -> list[int]:
    """The bytes each pass of IPython's token transforms reads, as they happen."""
    passes: list[int] = []
    real = inputtransformer2.make_tokens_by_line
    monkeypatch.setattr(inputtransformer2, "make_tokens_by_line",
                        lambda lines: passes.append(sum(map(len, lines))) or real(lines))
    return passes


def test_what_the_transformer_reads_is_bounded_by_one_budget(monkeypatch):
    """After each magic IPython reads the whole cell again: a 32 KiB cell with 100 magics took 6 s, 256 KiB of
    magics 430 s. All the cells of a submission share one budget; no pass starts beyond it, and a cell it
    cannot turn is kept as written, saying why."""
    passes = _read_bytes(monkeypatch)
    turner = jupyter.Turner()
    costly = "x = 1\n" * 5_000 + "%time f()\n" * 100
    kept, why = turner.python(costly)
    assert kept == costly and why == jupyter.OVER_BUDGET
    assert turner.python("%matplotlib inline\n") == ("%matplotlib inline\n", jupyter.OVER_BUDGET)
    assert sum(passes) <= jupyter.MAX_TRANSFORM_BYTES and turner.used == jupyter.MAX_TRANSFORM_BYTES


def test_ipythons_own_limit_is_said(monkeypatch):
    """IPython gives up on a cell that needs more than its 500 passes (here 3), as under Restart & Run All."""
    monkeypatch.setattr(inputtransformer2, "TRANSFORM_LOOP_LIMIT", 3)
    assert jupyter.Turner().python("%a\n" * 2)[1] == ""
    assert jupyter.Turner().python("%a\n" * 3) == ("%a\n" * 3, "IPython raised RuntimeError")


def test_only_a_cell_that_times_or_captures_its_code_runs_it():
    assert jupyter.Turner().python("%%time\n%%capture out\nx = !ls\n") == ("x = get_ipython().getoutput('ls')\n", "")
    assert jupyter.Turner().python("%%bash\nls\n")[0] == "get_ipython().run_cell_magic('bash', '', 'ls\\n')\n"
    assert jupyter.Turner().python("%%timeit\nx = 1\n")[0].startswith("get_ipython().run_cell_magic('timeit'")
