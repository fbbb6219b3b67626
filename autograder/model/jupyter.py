"""A notebook cell turned into the Python that IPython runs for it (SPEC, "The assignment": cells are read as
IPython reads them, magics and shell escapes by logical line).

IPython's own input transformer does the turning, so a magic, a shell command or a help request
(`%timeit`, `!pip install a \\`, `torch.tril?`, `res = %timeit -o f()`) becomes the call of `get_ipython()`
that IPython makes of it, and a continuation line that merely starts with `!=` or `%` stays Python. The
sandbox's `get_ipython()` (isolation/magics.py) does nothing when called, as the notebook tells students. One
kind of magic is different: a cell that starts with `%%time` or `%%capture` is the student's code under a
stopwatch or a capture, and IPython runs that code as the cell's own, so here it is the cell's code.

Only IPython's static transformations apply (what `TransformerManager.transform_cell` does); the ones an
interactive shell adds for a one-line cell from its state at run time (automagic: `pwd` without its `%`) are
not part of a notebook's text. A cell that parses as Python already is not turned (model.submission):
IPython leaves what such a cell means as it is, apart from a few that its clean-up breaks (a first line that
is an indented comment dedents the lines below it), which run as Python runs them.

Where it runs, and what it costs. It runs in the grader's own process: what runs of a cell the student added,
and what the tampering scan reads, are decided there from the cell's Python, and the transformer only reads
text (nothing of the cell runs). Its cost is the risk: after each piece of IPython syntax it turns, it reads the
whole cell again, so its work is the cell's size times the pieces in it (a 32 KiB cell with 100 magics took
6 s; 256 KiB of magics, 430 s before IPython gave up at 500 pieces). So the passes over one submission's cells
share a budget of bytes read (MAX_TRANSFORM_BYTES, counted before each pass, so no pass runs past it): a
notebook built to cost the most (one cell of 128 KiB after a magic) is read in 0.7 s here, as long as reading
the same file took before cells were turned (parsing it); the answer key's notebook, 0.02 s. A cell that
cannot be turned within what is left, or that IPython itself gives up on, is kept as written, with a note.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

# Bytes the transformer may read over one submission's cells: three times what the answer key's notebooks need
# (39 KiB, each byte read once), half the most code a submission may hold (submission.MAX_CODE_BYTES).
MAX_TRANSFORM_BYTES = 128 * 2**10
OVER_BUDGET = f"over what the grader reads to turn a submission's cells ({MAX_TRANSFORM_BYTES:,} bytes in all)"
RUNS_ITS_CODE = ("time", "capture")  # cell magics whose code IPython runs as the cell's own, in the notebook
CELL_MAGIC_CALL = "get_ipython().run_cell_magic("


class _OverBudget(Exception):
    """The transformer's next pass over a cell would read more than is left of the submission's budget."""


def _metered(budget: int) -> Any:
    """IPython's TransformerManager, counting the bytes each pass over a cell reads against `budget`.
    Imported here: a run that reads no notebook never loads IPython."""
    from IPython.core.inputtransformer2 import TransformerManager

    class Metered(TransformerManager):
        left = budget

        def do_one_token_transform(self, lines: list[str]) -> tuple[bool, list[str]]:
            self.left -= sum(map(len, lines))
            if self.left < 0:
                raise _OverBudget
            return super().do_one_token_transform(lines)

    return Metered()


class Turner:
    """Turns cells into Python, all of them within one budget of bytes read (MAX_TRANSFORM_BYTES)."""

    def __init__(self, budget: int = MAX_TRANSFORM_BYTES) -> None:
        self.budget = budget
        self._manager = _metered(budget)

    @property
    def used(self) -> int:
        """The bytes its passes have read so far (past the budget, the budget)."""
        return min(self.budget, self.budget - self._manager.left)

    def python(self, code: str) -> tuple[str, str]:
        """(the Python IPython runs for `code`, "") or, where it could not be turned, (`code` as written, why)."""
        turned = code
        while True:
            try:
                with warnings.catch_warnings():  # IPython warns of line breaks only it sees (U+2028): not our output
                    warnings.simplefilter("ignore")
                    turned = self._manager.transform_cell(turned)
            except _OverBudget:
                return code, OVER_BUDGET
            except Exception as exc:  # noqa: BLE001 - IPython's own limit (500 pieces), or any step it fails on
                return code, f"IPython raised {type(exc).__name__}"
            body = _code_under_magic(turned)
            if body is None:
                return (code if turned == code + "\n" else turned), ""
            turned = body



def _code_under_magic(turned: str) -> str | None:
    """The code of a cell that IPython turned into `%%time` or `%%capture` over code (RUNS_ITS_CODE), else None."""
    if not turned.startswith(CELL_MAGIC_CALL):
        return None
    try:
        body = ast.parse(turned).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    match body:
        case [ast.Expr(value=ast.Call(func=ast.Attribute(attr="run_cell_magic"),
                                      args=[ast.Constant(value=str(name)), ast.Constant(value=str()),
                                            ast.Constant(value=str(code))]))] if name in RUNS_ITS_CODE:
            return code
    return None
