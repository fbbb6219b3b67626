"""Cells that only assign literals, read without running them: the quiz's.

A quiz notebook's cells give each answer a literal (`answer_q01 = "c"`) and import the released
helper that every sandbox has imported already. Running them in a sandbox (a process forked and
confined for the notebook, one more for the part, a round trip per answer; docs/performance.md says
what that costs) gives what reading them gives: the last literal each name was given. So where every
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


MAX_LITERAL_NODES = 1000  # per value: an answer is a letter; a list of answers a few dozen
MAX_LITERAL_CODE = 64 * 2**10  # characters of cells in all: a quiz's answer cells hold a few thousand
PLAIN_CONSTANTS = (str, bytes, int, float, bool, type(None))


class _NotPlain(Exception):
    """A value `_literal` does not read: a sandbox loads the cells instead."""


class _Tuple(list):
    """A tuple's elements while they are read (a tuple cannot be filled in later)."""


class _Dict(list):
    """A dict's values while they are read, beside its keys."""

    def __init__(self, keys: list[str]):
        super().__init__()
        self.keys = keys


def _literal(node: ast.expr, budget: list[int]) -> Any:
    """The value of a literal made of strings, bytes, numbers, None, lists, tuples and dicts with string
    keys, at most MAX_LITERAL_NODES nodes, read with a stack of its own. Sets and other keys are left to a
    sandbox: a set of 50,000 integers that hash alike costs seconds to build (strings hash with a random
    key of this process's, so no student can make theirs collide)."""
    root: list[Any] = []
    stack: list[tuple[ast.expr, list[Any]]] = [(node, root)]
    while stack:
        item, into = stack.pop()
        budget[0] -= 1
        if budget[0] < 0:
            raise _NotPlain
        if isinstance(item, ast.Constant) and type(item.value) in PLAIN_CONSTANTS:
            into.append(item.value)
        elif isinstance(item, ast.UnaryOp) and isinstance(item.op, (ast.USub, ast.UAdd)) \
                and isinstance(item.operand, ast.Constant) and (type(item.operand.value) is int
                                                                or type(item.operand.value) is float):
            into.append(-item.operand.value if isinstance(item.op, ast.USub) else item.operand.value)
        elif isinstance(item, (ast.List, ast.Tuple, ast.Dict)):
            if isinstance(item, ast.Dict):
                if not all(isinstance(k, ast.Constant) and type(k.value) is str for k in item.keys):
                    raise _NotPlain
                # every key is a str constant (checked above): the filter and str() only say so to mypy
                elements: list[Any] = _Dict([str(k.value) for k in item.keys if isinstance(k, ast.Constant)])
                children = item.values
            else:
                elements = [] if isinstance(item, ast.List) else _Tuple()
                children = item.elts
            into.append(elements)
            stack.extend((child, elements) for child in reversed(children))
        else:
            raise _NotPlain
    return _finished(root[0])


def _finished(value: Any) -> Any:
    """`value` with each _Tuple made a tuple and each _Dict a dict, innermost first, without recursion."""
    if not isinstance(value, list):
        return value
    order, stack = [], [value]
    while stack:
        current = stack.pop()
        order.append(current)
        stack.extend(v for v in current if isinstance(v, list))
    done: dict[int, Any] = {}  # the id of a container read -> what it is; every one is alive until the end
    for current in reversed(order):
        current[:] = [done[id(v)] if isinstance(v, list) else v for v in current]
        if isinstance(current, _Tuple):
            done[id(current)] = tuple(current)
        elif isinstance(current, _Dict):
            done[id(current)] = dict(zip(current.keys, current))
        else:
            done[id(current)] = current
    return done[id(value)]


def literal_values(cells: list[tuple[str, str]], preloaded: set[str]) -> dict[str, Any] | None:
    """The value each name is left with by `cells` (label, code), where all they do is assign literals to
    names, import modules of `preloaded` (as themselves) and state constants; None otherwise."""
    if sum(len(code) for _, code in cells) > MAX_LITERAL_CODE:  # not a quiz's answers: not parsed here at all
        return None
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
                    values[statement.targets[0].id] = _literal(statement.value, [MAX_LITERAL_NODES])
                except _NotPlain:
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

    def __init__(self, values: dict[str, Any], open_channel: Callable[[], tuple[Any, Callable[[], object]]]):
        self.values = values
        self._open_channel = open_channel
        self._opened: tuple[Any, Callable[[], object]] | None = None
        self._setup: list[bytes] = []  # the load and serve requests, for a channel opened later
        self.last_work_seconds: float | None = None
        self.last_held: int | str | None = None

    def __call__(self, request: bytes, seconds: float, on_callback: CallbackHandler,
                 warmup: bytes | None = None) -> bytes:
        if self._opened is None and warmup is None:
            decoded = wire.decode(request)
            op, target = decoded.get("op"), decoded.get("target")
            if op in (protocol.LOAD, protocol.SERVE):
                self._setup.append(request)
                self.last_work_seconds = 0.0
                return wire.encode(protocol.ok([] if op == protocol.LOAD else None))  # literals raise nothing
            if op == protocol.GET and type(target) is str and target in self.values:
                self.last_work_seconds = 0.0
                return wire.encode(protocol.ok(self.values[target]))
        if self._opened is None:
            self._opened = self._open_channel()
            for setup in self._setup:
                self._opened[0](setup, seconds, on_callback)
        channel = self._opened[0]
        try:
            return channel(request, seconds, on_callback, warmup=warmup)
        finally:
            self.last_work_seconds, self.last_held = channel.last_work_seconds, channel.last_held

    def close(self) -> None:
        if self._opened is not None:
            self._opened[1]()
