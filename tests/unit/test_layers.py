"""The package's rooms point one way. Every module of `autograder/` belongs to one room of `ROOMS`, and
imports (at its top or inside a function) only from its own room or the rooms below it; no import circle
anywhere, between rooms or inside one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "autograder"
# Top to bottom: each room, and what it is for. A room is a sub-package or a top-level module.
ROOMS: list[tuple[str, ...]] = [
    ("cli", "__main__"),  # the command line: parses, calls the API, prints
    ("service",),  # the grading service beside a JupyterHub: the exchange watched, a queue, the page
    ("api",),  # the public Python API: grade a class, grade one submission, export, read results
    ("gradescope",),  # the Gradescope zip and its run
    ("classrun",),  # one grading run of a class: the run's decisions, made once, passed down as values
    ("nbgrader",),  # nbgrader: the course, its gradebook, its grade cells, the quiz's release
    ("reports",),  # what a run writes: results.json, feedback, grades.csv, the class report, exports
    ("graders",),  # the hidden graders (pytest modules) and the quiz's key
    ("pool",),  # the process pool: local workers or a Dask cluster, behind one protocol
    ("engine",),  # the grading engine: a session of checks on one loaded submission; the graders' API (kit)
    ("model",),  # the submission model: what was handed in, by whom, what it scored
    ("quiz",),  # the quiz as data: its build, what a student was shown, whether it counts
    ("releases",),  # the release graded against: the package's or a course's
    ("isolation",),  # sandboxes: confinement, the wire to the student's process, the measured checks
    ("assignment", "hints", "text", "versions", "__init__"),  # the foundation: the assignment's facts, words
]
LEVEL = {name: level for level, room in enumerate(ROOMS) for name in room}


def imported(path: Path, root: Path = PACKAGE) -> set[str]:
    """The module paths, relative to the package at `root`, that `path` imports ("pool.batch", "reports", ...)."""
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
        elif isinstance(node, ast.ImportFrom) and node.module == "autograder":  # `from autograder import quiz`
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("autograder.") for a in node.names if a.name.startswith("autograder."))
    return found


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Every module of the package at `root`, by its dotted path inside it ("pool.batch", "cli", "__init__")."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        found[".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)] = path
    return found


def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (a name imported from a package is the package's)."""
    known = modules(root)

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    return {module: {found for name in imported(path, root) if (found := resolve(name)) and found != module}
            for module, path in known.items()}


def room(module: str) -> str:
    return module.split(".")[0]


def test_every_module_is_in_a_room():
    assert sorted({room(m) for m in modules()} - set(LEVEL)) == []


def test_no_module_imports_a_room_above_its_own():
    climbs = {module: sorted(m for m in targets if LEVEL[room(m)] < LEVEL[room(module)])
              for module, targets in graph().items()}
    assert {module: up for module, up in climbs.items() if up} == {}


TOOLS = PACKAGE.parent / "tools"
DRIVERS = {"cli": PACKAGE / "cli.py", "__main__": PACKAGE / "__main__.py", "tools.demo": TOOLS / "demo.py",
           "tools.bench": TOOLS / "bench.py", "tools.course": TOOLS / "course.py"}  # what drives grading
# the API, the command line's printing, the foundation, and the grading service (a room above the API, which
# `serve` only dispatches to)
THROUGH_THE_API = {"api", "cli", "service", *ROOMS[-1]}


def test_what_drives_grading_goes_through_the_api_alone():
    """The command line, the demo and the bench (its course) call the public API and nothing below it."""
    below = {name: sorted(m for m in imported(path, path.parent) if room(m) in LEVEL and room(m) not in THROUGH_THE_API)
             for name, path in DRIVERS.items()}  # (a tool's own modules are in no room of the package)
    assert {name: found for name, found in below.items() if found} == {}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of `edges`: its strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle():
    assert circles(graph()) == []


def test_the_scan_sees_each_kind_of_import(tmp_path):
    """A module of engine/ importing reports/ in each way Python allows is caught."""
    root = tmp_path / "autograder"
    (root / "engine").mkdir(parents=True)
    sources = {"a.py": "from ..reports import write_class\n", "b.py": "from .. import reports\n",
               "c.py": "def f():\n    import autograder.reports.table\n", "d.py": "from autograder.reports import x\n",
               "e.py": "from .session import plan\n", "f.py": "from autograder import reports\n"}
    for name, source in sources.items():
        (root / "engine" / name).write_text(source)
    seen = {name: {room(m) for m in imported(root / "engine" / name, root)} for name in sources}
    assert seen == {"a.py": {"reports"}, "b.py": {"reports"}, "c.py": {"reports"}, "d.py": {"reports"},
                    "e.py": {"engine"}, "f.py": {"reports"}}


@pytest.mark.parametrize("edges, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])
def test_a_circle_is_found(edges, expected):
    assert circles(edges) == expected
