"""Small text helpers shared by reading submissions and writing reports."""

from __future__ import annotations

import re

_LINE_END = re.compile(r"\r\n|\r|\n")


def code_lines(code: str) -> list[str]:
    """`code`'s lines as Python's tokenizer counts them (and `ast` numbers them): a line ends at \\n, \\r\\n
    or \\r only. `str.splitlines` also ends one at U+2028, a form feed and others, which a comment may hold."""
    return _LINE_END.split(code)


def printable(text: str, limit: int = 200) -> str:
    """`text` with control characters (newlines, terminal escapes) shown as escapes: a file name or a
    cell id chosen by a student must not rewrite the instructor's terminal or a table's rows."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text)[:limit])[:limit]


def points(n: float) -> str:
    """`1 point`, `2 points`, `0.5 points`."""
    return f"{n:g} point" + ("" if n == 1 else "s")


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """`text` as a spreadsheet cell that is never read as a formula (OWASP's CSV injection advice: a
    leading apostrophe), for the cells of a CSV that hold what a student chose (an id, a message)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


# The hint of a failed check whose subject was left as released (a question unanswered): no mistake. The graders
# set it (core.checks), the reports count such checks apart from mistakes; here, where both can read it without
# importing torch.
NOT_ATTEMPTED = "not attempted"
