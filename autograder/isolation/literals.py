"""Cells that only assign literals, read without running them: the quiz's.

A quiz notebook's cells give each answer a literal (`answer_q01 = "c"`) and import the released
helper that every sandbox has imported already. Running them in a sandbox (a process forked and
confined for the notebook, one more for the part, a round trip per answer: some 40 ms of CPU a
submission) gives what reading them gives: the last literal each name was given. So where every
statement of a part's cells is such an assignment, a constant, or an import of a module every sandbox
imported beforehand, `LiteralChannel` answers loading and reading those names from what
`ast.literal_eval` reads, and nothing runs. Whatever else it is asked (a name the cells do not assign,
a call) goes to a sandbox opened then and loaded with the same cells, as it would have been at once.
"""

from __future__ import annotations

import ast
from typing import Any, Callable

from . import protocol, wire
from .protocol import CallbackHandler


def literal_values(cells: list[tuple[str, str]], preloaded: set[str]) -> dict[str, Any] | None:
    """The value each name is left with by `cells` (label, code), where all they do is assign literals to
    names, import modules of `preloaded` (as themselves) and state constants; None otherwise."""
    values: dict[str, Any] = {}
    imported: set[str] = set()
    for _, code in cells:
        try:
            statements = ast.parse(code).body
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return None
        for statement in statements:
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                    and isinstance(statement.targets[0], ast.Name):
                try:
                    values[statement.targets[0].id] = ast.literal_eval(statement.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    return None
            elif isinstance(statement, ast.Import) and all(
                    alias.asname is None and alias.name in preloaded and "." not in alias.name
                    for alias in statement.names):
                imported.update(alias.name for alias in statement.names)
            elif not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
                return None
    return None if imported & values.keys() else values


class LiteralChannel:
    """A part's channel that answers from `values` (see `literal_values`) what they answer exactly, and
    sends anything else to a channel from `open_channel` (a sandbox), loaded first as it would have been."""

    def __init__(self, values: dict[str, Any], open_channel: Callable[[], tuple[Any, Callable[[], None]]]):
        self.values = values
        self._open_channel = open_channel
        self._opened: tuple[Any, Callable[[], None]] | None = None
        self._setup: list[bytes] = []  # the load and serve requests, for a channel opened later
        self.last_cpu_seconds: float | None = None

    def __call__(self, request: bytes, seconds: float, on_callback: CallbackHandler, isolated: bool = False) -> bytes:
        if self._opened is None and not isolated:
            decoded = wire.decode(request)
            op, target = decoded.get("op"), decoded.get("target")
            if op in (protocol.LOAD, protocol.SERVE):
                self._setup.append(request)
                self.last_cpu_seconds = 0.0
                return wire.encode(protocol.ok([] if op == protocol.LOAD else None))  # literals raise nothing
            if op == protocol.GET and type(target) is str and target in self.values:
                self.last_cpu_seconds = 0.0
                return wire.encode(protocol.ok(self.values[target]))
        if self._opened is None:
            self._opened = self._open_channel()
            for setup in self._setup:
                self._opened[0](setup, seconds, on_callback)
        channel = self._opened[0]
        try:
            return channel(request, seconds, on_callback, isolated=isolated)
        finally:
            self.last_cpu_seconds = channel.last_cpu_seconds

    def close(self) -> None:
        if self._opened is not None:
            self._opened[1]()
