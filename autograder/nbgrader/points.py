"""The points a notebook shows for each part, kept to the one place they are set: the checks' points in
autograder/graders/test_<part>.py (`autograder.graders.points`).

A notebook shows a part's points twice: its grade cell `grade-<part>` (nbgrader's gradebook records it, and
`nbgrader export` totals it) and the row of the table of sections at the top of attention.ipynb. Both are
copies of the graders' points:

* `make release` writes them into the source notebooks (`with_grader_points`) before it builds, so that an
  instructor changes a part's points in the grader alone;
* `PartPoints`, first in nbgrader_config.py's build pipeline, refuses to build a notebook that says
  otherwise (a course's copy edited by hand, or made before the graders changed): the message names each
  difference and what to do, and nothing is released that the grader would total differently.

A quiz that does not count is then released worth 0 points (`quizrelease.without_points`), after this check.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from nbgrader.preprocessors import NbGraderPreprocessor

from .. import assignment

# a row of the table of sections: "| 1. Masks | what the student writes | 20 |"
TABLE_ROW = re.compile(r"^(\| (\d+)\. [^|\n]+\|[^|\n]+\| )(\d+(?:\.\d+)?)( \|)$", re.M)


def shown(value: float) -> str:
    return f"{value:g}"


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def sections(notebook: str) -> dict[int, str]:
    """Section number -> part, for the parts of `notebook` in assignment order (1. masks, 2. scaling ...)."""
    return {i: p.name for i, p in enumerate((p for p in assignment.PARTS if p.notebook == notebook), start=1)}


def shown_points(nb: Any, notebook: str) -> dict[str, list[tuple[str, float]]]:
    """part -> [(where, points)] for every place `nb` (the notebook `notebook`) shows a part's points."""
    found: dict[str, list[tuple[str, float]]] = {}
    numbered = sections(notebook)
    for cell in nb.get("cells", []):
        meta = assignment.nbgrader_metadata(cell)
        grade_id = str(meta.get("grade_id", ""))
        if assignment.is_grade_cell(cell) and grade_id.startswith(assignment.GRADE_CELL_PREFIX):
            part = grade_id.removeprefix(assignment.GRADE_CELL_PREFIX)
            found.setdefault(part, []).append((f"grade cell {grade_id}", float(meta.get("points", 0))))
        elif cell.get("cell_type") == "markdown":
            for match in TABLE_ROW.finditer(_source(cell)):
                row_part = numbered.get(int(match.group(2)))
                if row_part is not None:
                    found.setdefault(row_part, []).append((f"the table's row {match.group(2)}", float(match.group(3))))
    return found


def differences(nb: Any, notebook: str, points: Mapping[str, float]) -> list[str]:
    """Each place `nb` shows a part's points other than `points` (part -> the graders' points)."""
    return [f"{notebook}.ipynb, {where}: {shown(value)} points; the {part} grader's checks give {shown(points[part])}"
            for part, places in shown_points(nb, notebook).items() if part in points
            for where, value in places if value != points[part]]


def with_grader_points(nb: Any, notebook: str, points: Mapping[str, float]) -> bool:
    """Write `points` (part -> the graders' points) into every place `nb` shows them; whether anything changed."""
    changed = False
    numbered = sections(notebook)
    for cell in nb.get("cells", []):
        meta = assignment.nbgrader_metadata(cell)
        part = str(meta.get("grade_id", "")).removeprefix(assignment.GRADE_CELL_PREFIX)
        if assignment.is_grade_cell(cell) and part in points and meta.get("points") != points[part]:
            meta["points"] = int(points[part]) if float(points[part]).is_integer() else points[part]
            changed = True
        elif cell.get("cell_type") == "markdown":
            text = _source(cell)
            new = TABLE_ROW.sub(lambda m: m.group(1) + shown(points.get(numbered.get(int(m.group(2)), ""),
                                                                        float(m.group(3)))) + m.group(4), text)
            if new != text:
                cell["source"] = new
                changed = True
    return changed


def refusal(found: list[str]) -> str:
    return ("the points in this notebook are not the graders':\n  " + "\n  ".join(found)
            + "\nA part's points are set in one place, the points of its checks in autograder/graders/"
              "test_<part>.py (docs/adapting.md, 'Points'): change them there and run `make release` in the "
              "project's checkout, or copy assignments/ from that checkout into the course again.")


class PartPoints(NbGraderPreprocessor):
    """Refuses to build a notebook of the assignment whose grade cells or table of sections give a part other
    points than its grader's checks (`refusal` says which and what to do)."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        from ..graders.points import grader_points

        info = resources.get("nbgrader") or {}
        notebook = info.get("notebook")
        if info.get("assignment") != assignment.ASSIGNMENT or notebook not in assignment.NOTEBOOKS:
            return nb, resources
        found = differences(nb, notebook, grader_points())
        if found:
            raise ValueError(refusal(found))
        return nb, resources
