"""Each part's points, read off its grader: the one place a part's points are set is the `points=` of the
checks in `test_<part>.py` (a parametrised check counts once per case). The release build, the tests and
the docs take them from here; nothing else writes a part's points down by hand.

Importing a grader imports torch: this runs where the graders run anyway, or once per release build.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .. import assignment


def module_points(module: ModuleType) -> float:
    """The points of every check of a grader module, read off its pytest marks."""
    total = 0.0
    for name in dir(module):
        marks = getattr(getattr(module, name), "pytestmark", [])
        checks = [m for m in marks if m.name == "check"]
        if not checks:
            continue
        # a check whose name has a {placeholder} is one check per parametrised case
        cases = [len(m.args[1]) for m in marks if m.name == "parametrize"] if "{" in checks[0].kwargs["name"] else []
        total += sum(float(c.kwargs["points"]) for c in checks) * (cases[0] if cases else 1)
    return total


def part_points(part: str) -> float:
    """The points of part `part`: the sum of its grader's checks."""
    module = importlib.import_module(f"autograder.graders.{assignment.part(part).grader_module.removesuffix('.py')}")
    return module_points(module)


def grader_points() -> dict[str, float]:
    """part -> its points, for every part, in assignment order."""
    return {name: part_points(name) for name in assignment.PART_NAMES}
