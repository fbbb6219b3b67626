"""The troubleshooting page quotes real messages: every line of its text blocks, cut at its placeholders
(`…`), is made of text that the grader, the students' helpers or nbgrader hold in their code. A message
reworded in the code fails here until the page follows."""

from __future__ import annotations

import ast
import re
import warnings
from functools import lru_cache
from pathlib import Path

import nbgrader
import pytest

from autograder import assignment

ROOT = assignment.CHECKOUT_ROOT
pytestmark = pytest.mark.skipif(ROOT is None, reason="needs the project's checkout (docs/)")
PREFIXES = ("error: ", "warning: ", "note: ", "gradebook: ", "ValueError: ")  # added where the message is printed
SHORTEST = 6  # a fragment shorter than this ("; ", " in ") says nothing of where it comes from


@lru_cache(maxsize=None)
def literal_texts() -> tuple[str, ...]:
    """Every string literal of the code that prints messages; an f-string's literal parts, joined where it
    interpolates a string constant of its module (`f"${SECRET_VARIABLE}"` reads `$AUTOGRADER_SECRET`)."""
    files = [*Path(assignment.PACKAGE_DIR).rglob("*.py"), *Path(nbgrader.__file__).parent.rglob("*.py"),
             ROOT / "assignments" / "attention" / "selfcheck.py", ROOT / "assignments" / "attention" / "quizcheck.py"]
    found = []
    for path in files:
        with warnings.catch_warnings():  # nbgrader's own escapes ("\\d" in plain strings) are not ours to fix
            warnings.simplefilter("ignore", (SyntaxWarning, DeprecationWarning))
            tree = ast.parse(path.read_text(encoding="utf-8"))
        constants = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                     and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                     for t in n.targets if isinstance(t, ast.Name)}
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                found += "".join(v.value if isinstance(v, ast.Constant) else
                                 constants.get(getattr(v.value, "id", ""), "\0") for v in node.values).split("\0")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.append(node.value)
    return tuple(found)


def messages() -> list[str]:
    page = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8") if ROOT else ""
    return [line for block in re.findall(r"^```text\n(.*?)^```", page, flags=re.S | re.M) for line in block.splitlines()]


def test_the_page_quotes_messages():
    assert len(messages()) >= 20


@pytest.mark.parametrize("message", messages())
def test_each_message_is_one_the_code_prints(message):
    text = message.strip()
    for prefix in PREFIXES:
        text = text.removeprefix(prefix)
    fragments = [f for f in (part.strip() for part in text.split("…")) if len(f) >= SHORTEST]
    assert fragments, message
    missing = [f for f in fragments if not any(f in literal for literal in literal_texts())]
    assert not missing, f"not in the code: {missing}"
