"""The copies of the hints catalogue (autograder/hints.py), written by `make release`:

* docs/mistakes.md: each hint cell ends with a comment naming its key (`<!-- hint: masks.fill_zero -->`);
  the text before the comment is the catalogue's Markdown;
* assignments/attention/selfcheck.py: the block from `# BEGIN HINTS` to `# END HINTS` holds every hint as
  plain text (the students' copy: their self-checks give the graders' hints, without the package).

tests/unit/test_hints.py fails while either copy differs from the catalogue.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from autograder.hints import HINTS, plain

MARKED_CELL = re.compile(r"(?<=\| )((?:[^|\\\n]|\\.)*?) <!-- hint: ([a-z]+\.[a-z_0-9]+) -->(?= \|)")
BLOCK = re.compile(r"^# BEGIN HINTS$.*?^# END HINTS$", re.S | re.M)


def page_with_hints(page: str) -> str:
    """docs/mistakes.md with each marked hint cell holding the catalogue's text (a `|` escaped for the table)."""
    def cell(match: re.Match) -> str:
        return HINTS[match.group(2)].replace("|", "\\|") + f" <!-- hint: {match.group(2)} -->"

    return MARKED_CELL.sub(cell, page)


def page_keys(page: str) -> list[str]:
    """The keys of the marked hint cells of a page, in its order."""
    return [m.group(2) for m in MARKED_CELL.finditer(page)]


def hints_block() -> str:
    """selfcheck.py's block of hints: the catalogue as plain text."""
    lines = ["# BEGIN HINTS", "# Written by `make release` from the hints catalogue (autograder/hints.py): the likely",
             "# mistakes in the graders' words. Change them there, not here.", "HINTS: dict[str, str] = {"]
    lines += [f"    {json.dumps(key)}: {json.dumps(plain(text), ensure_ascii=False)}," for key, text in HINTS.items()]
    return "\n".join([*lines, "}", "# END HINTS"])


def selfcheck_with_hints(source: str) -> str:
    """selfcheck.py with its block of hints written from the catalogue; ValueError without one such block."""
    if len(BLOCK.findall(source)) != 1:
        raise ValueError("selfcheck.py must hold one block from '# BEGIN HINTS' to '# END HINTS'")
    return BLOCK.sub(lambda _: hints_block(), source)


def write_hint_copies(root: Path) -> list[Path]:
    """Both copies under the checkout `root`, written where they differ from the catalogue; those written."""
    written = []
    for path, rewrite in ((root / "docs" / "mistakes.md", page_with_hints),
                          (root / "assignments" / "attention" / "selfcheck.py", selfcheck_with_hints)):
        text = path.read_text(encoding="utf-8")
        new = rewrite(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            written.append(path)
    return written
