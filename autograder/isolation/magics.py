"""The `get_ipython()` a submission's cells find when graded.

IPython's syntax in a cell (`%matplotlib inline`, `!pip install einops`, `torch.tril?`) reaches the sandbox
as the calls of `get_ipython()` that IPython makes of it (model/jupyter.py). When graded none of them does
anything, as the notebook tells students: nothing is installed, shown, timed or run in a shell. Each call
returns what lets the code around it go on: None; an empty list for the output `x = !ls` captures; and, for
`%timeit` and `%%timeit`, a result shaped like IPython's TimeitResult with no timings in it (its times are
NaN, its lists empty), so that `res = %timeit -o f()` followed by `print(res.average)` still runs.
"""

from __future__ import annotations

from typing import Any

NOT_TIMED = float("nan")


class UntimedResult:
    """What `%timeit` returns when graded: IPython's TimeitResult's fields, with nothing timed."""

    loops = repeat = 0
    best = worst = average = stdev = compile_time = NOT_TIMED

    def __init__(self) -> None:
        self.all_runs: list[float] = []
        self.timings: list[float] = []

    def __repr__(self) -> str:
        return "<TimeitResult: not timed when graded>"


class GradingShell:
    """Every method IPython's input transformer calls, doing nothing."""

    def run_line_magic(self, magic_name: str, line: str, _stack_depth: int = 1) -> Any:
        return UntimedResult() if magic_name == "timeit" else None

    def run_cell_magic(self, magic_name: str, line: str, cell: str) -> Any:
        return UntimedResult() if magic_name == "timeit" else None

    def system(self, cmd: str) -> None:
        return None

    def getoutput(self, cmd: str, split: bool = True, depth: int = 0) -> list[str]:
        return []

    def show_usage(self) -> None:
        return None

    def __repr__(self) -> str:
        return "<IPython's shell: magics and shell commands do not run when graded>"


SHELL = GradingShell()


def get_ipython() -> GradingShell:
    """The shell the transformed cells call (IPython puts its own `get_ipython` in a notebook's builtins)."""
    return SHELL
