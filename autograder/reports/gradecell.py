"""What an nbgrader grade cell shows for a part: each check, and for a failed one what was checked,
expected against got, and the likely mistake; then the part's score. Written into the gradebook's
autograded notebooks and printed by grade cells under `nbgrader autograde`, the same both ways."""

from __future__ import annotations

from ..core.results import CheckResult
from ..text import points


def grade_cell_text(part: str, checks: list[CheckResult], problems: list[str] = ()) -> str:
    lines = [f"Note: {p}" for p in problems]
    for check in checks:
        lines.append(f"[{'passed' if check.passed else 'FAILED'}] {part}/{check.name} ({points(check.max_score)})")
        if not check.passed:
            lines += ["    " + line for line in "\n".join(check.outputs).splitlines()]
    earned = sum(c.score for c in checks)
    lines.append(f"{part}: {earned:g} / {points(sum(c.max_score for c in checks))}")
    return "\n".join(lines) + "\n"
