"""A hint is written once, in the catalogue (autograder/hints.py): the graders and the corpus name it by its
key; docs/mistakes.md and the students' selfcheck.py hold copies that `make release` writes (tools/hints.py),
and these tests fail while a copy differs or a hint is written out anywhere else."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from autograder import assignment
from autograder.hints import HINTS, hint, plain
from tools import hints as copies

ROOT = assignment.CHECKOUT_ROOT
pytestmark = pytest.mark.skipif(ROOT is None, reason="needs the project's checkout")
SELFCHECK = ROOT / "assignments" / "attention" / "selfcheck.py" if ROOT else Path()
PAGE = ROOT / "docs" / "mistakes.md" if ROOT else Path()
REDO = "run `make release`, which writes the catalogue's hints there"


def test_the_mistakes_page_shows_every_hint_as_the_catalogue_writes_it():
    page = PAGE.read_text(encoding="utf-8")
    assert copies.page_with_hints(page) == page, f"docs/mistakes.md differs from autograder/hints.py: {REDO}"
    assert set(copies.page_keys(page)) == set(HINTS), "every hint has a row of the page, every row a hint"


def test_the_students_selfcheck_holds_the_catalogues_hints():
    source = SELFCHECK.read_text(encoding="utf-8")
    assert copies.selfcheck_with_hints(source) == source, f"selfcheck.py's HINTS differ from the catalogue: {REDO}"
    used = set(re.findall(r'_hint\("([a-z]+\.[a-z_0-9]+)"', source))
    assert used and used <= set(HINTS), used - set(HINTS)


def test_every_buggy_variant_names_a_hint_of_the_catalogue():
    for path in sorted((ROOT / "tests" / "corpus" / "buggy").glob("*.py")):
        keys = [line.split(":", 1)[1].strip() for line in path.read_text().splitlines() if line.startswith("# hint:")]
        assert len(keys) == 1 and keys[0] in HINTS, (path.name, keys)


def literals(path: Path) -> list[tuple[int, str]]:
    """The string literals of a Python file, outside its HINTS block, with their lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    block = next((n for n in tree.body if isinstance(n, ast.AnnAssign) and getattr(n.target, "id", "") == "HINTS"), None)
    skip = {id(n) for n in ast.walk(block)} if block else set()
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]


@pytest.mark.parametrize("path", [*sorted((ROOT / "autograder" / "graders").glob("test_*.py")), SELFCHECK]
                         if ROOT else [], ids=lambda p: p.name)
def test_no_hint_is_written_out_anywhere_else(path):
    texts = {plain(text): key for key, text in HINTS.items()}
    found = [(line, texts[text]) for line, text in literals(path) if text in texts]
    assert not found, f"{path.name} writes out hints of the catalogue; name them by key instead: {found}"


def test_a_hint_is_plain_where_a_student_reads_it():
    assert hint("scaling.dim") == "softmax over the keys: dim=-1" and HINTS["scaling.dim"].endswith("`dim=-1`")
