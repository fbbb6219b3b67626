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


def byte_size(n: int) -> str:
    """`n` bytes as a reader takes them in: `512 B`, `1.5 KiB`, `384 KiB`, `9.0 MiB`, `22 MiB`, `64 GiB`, to
    within 5%. Never a 0 for a size that is not 0 (a block of 384 KiB once read "0 MiB"): a unit is used only
    from one of it up."""
    n = int(n)
    if n < 1024:
        return f"{n:,} B"
    for power, unit in enumerate(("KiB", "MiB", "GiB"), start=1):
        value = n / 1024**power
        if value < 1023.5 or unit == "GiB":  # from 1023.5 on, the next unit up (1.0) reads better than 1024
            return (f"{value:.1f}" if value < 9.95 else f"{value:,.0f}") + f" {unit}"
    raise AssertionError("unreachable: the loop returns at GiB")


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """`text` as a spreadsheet cell that is never read as a formula (OWASP's CSV injection advice: a
    leading apostrophe), for the cells of a CSV that hold what a student chose (an id, a message)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


# The hint of a failed check whose subject was left as released (a question unanswered): no mistake. The graders
# set it (engine.checks), the reports count such checks apart from mistakes; here, where both can read it without
# importing torch.
NOT_ATTEMPTED = "not attempted"
