"""The package's layers point one way: the command line and the class run on top, then the nbgrader and
reports layers, then core/ (grading), then isolation/ (sandboxes). No module of a lower layer imports one
of a higher layer, at its top or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "autograder"
# what each layer must never import (module paths inside the package)
ABOVE = {
    "isolation": ("core", "reports", "nbgrader", "classrun", "cli", "gradescope", "graders"),
    "core": ("reports", "nbgrader", "classrun", "cli", "gradescope"),
    "reports": ("nbgrader", "classrun", "cli", "gradescope"),
}


def imported(path: Path, root: Path = PACKAGE) -> set[str]:
    """The module paths, relative to the package at `root`, that `path` imports ("core.batch", "reports", ...)."""
    package = path.relative_to(root).parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = list(package[:len(package) - node.level + 1])
            if node.module:
                found.add(".".join([*base, *node.module.split(".")]))
            else:  # `from .. import reports`
                found.update(".".join([*base, alias.name]) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("autograder."):
            found.add(node.module.removeprefix("autograder."))
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("autograder.") for a in node.names if a.name.startswith("autograder."))
    return found


@pytest.mark.parametrize("layer", sorted(ABOVE))
def test_no_module_imports_a_layer_above_its_own(layer):
    climbs = {}
    for path in sorted((PACKAGE / layer).rglob("*.py")):
        up = sorted(m for m in imported(path) if m.split(".")[0] in ABOVE[layer])
        if up:
            climbs[str(path.relative_to(PACKAGE))] = up
    assert not climbs, climbs


def test_the_scan_sees_each_kind_of_import(tmp_path):
    """A module of core/ importing reports/ in each way Python allows is caught."""
    root = tmp_path / "autograder"
    (root / "core").mkdir(parents=True)
    sources = {"a.py": "from ..reports import write_class\n", "b.py": "from .. import reports\n",
               "c.py": "def f():\n    import autograder.reports.table\n", "d.py": "from autograder.reports import x\n",
               "e.py": "from .batch import plan\n"}
    for name, source in sources.items():
        (root / "core" / name).write_text(source)
    seen = {name: {m.split(".")[0] for m in imported(root / "core" / name, root)} for name in sources}
    assert seen == {"a.py": {"reports"}, "b.py": {"reports"}, "c.py": {"reports"}, "d.py": {"reports"},
                    "e.py": {"core"}}
