"""Small text helpers shared by reading submissions and writing reports."""

from __future__ import annotations


def printable(text: str, limit: int = 200) -> str:
    """`text` with control characters (newlines, terminal escapes) shown as escapes: a file name or a
    cell id chosen by a student must not rewrite the instructor's terminal or a table's rows."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))[:limit]


def points(n: float) -> str:
    """`1 point`, `2 points`, `0.5 points`."""
    return f"{n:g} point" + ("" if n == 1 else "s")
