"""Grading from inside an nbgrader grade cell.

nbgrader runs the whole notebook in one kernel, then the grade cell. The cell
calls `grade_part`, which reads the saved notebook (nbgrader autogrades the
file it collected), keeps its answer cells and the source's setup cells, and
grades them exactly as the command-line grader does, so both give the same
score. The return value is the cell's partial credit.
"""

from __future__ import annotations

from pathlib import Path

from .engine import grade
from .submission import read_submission


def grade_part(part: str, notebook: str = "attention.ipynb") -> float:
    """Points earned on `part` by the notebook `notebook` in the current folder, with feedback printed."""
    submission = read_submission(Path(notebook))
    graded = grade(submission, secret="", parts=(part,))
    earned, most = graded.part_scores().get(part, (0.0, 0.0))
    for problem in submission.problems:
        print(f"Note: {problem}")
    for check in graded.checks:
        mark = "passed" if check.passed else "FAILED"
        print(f"[{mark}] {check.part}/{check.name} ({check.max_score:g} points)")
        if not check.passed:
            print("    " + "\n    ".join("\n".join(check.outputs).splitlines()))
    print(f"{part}: {earned:g} / {most:g} points")
    return earned
