"""What an nbgrader grade cell shows for a part: its score and likely mistake first, then each check,
and for a failed one what was checked, expected against got, and the likely mistake. Written into the
gradebook's autograded notebooks and printed by grade cells under `nbgrader autograde`, the same both ways."""

from __future__ import annotations

from typing import Sequence

from ..model.results import CheckResult
from ..text import points
from .feedback import part_mistakes, part_state


def grade_cell_text(part: str, checks: list[CheckResult], problems: Sequence[str] = (), counted: bool = True) -> str:
    """`counted` False: the part is reported apart, left out of the total (its grade cell is worth 0 points)."""
    lines = [f"Note: {p}" for p in problems]
    earned = sum(c.score for c in checks)
    score = f"{part}: {earned:g} / {points(sum(c.max_score for c in checks))}"
    if not counted:
        score += " (self-check: not counted in the total)"
    state = part_state(checks)
    mistakes = part_mistakes(checks)
    if state == "full marks":
        lines.append(f"{score}: full marks")
    elif state == "not attempted":
        lines.append(f"{score}: not attempted yet")
    elif len(mistakes) == 1:
        lines.append(f"{score}; likely mistake: {mistakes[0][0]}")
    else:
        lines.append(score + (f"; {len(mistakes)} different likely mistakes, below" if mistakes else ""))
    for check in checks:
        lines.append(f"[{'passed' if check.passed else 'FAILED'}] {part}/{check.name} ({points(check.max_score)})")
        if not check.passed:
            lines += ["    " + line for line in "\n".join(check.outputs).splitlines()]
    lines.append(score)
    return "\n".join(lines) + "\n"
