"""The course's build is what is graded (`grade --nbgrader`).

A course grades against its own release folder, what its students fetched: the setup cells that run before
a student's cells, the public helpers beside them and the quiz's build all come from there
(autograder.releases). Its points come from its gradebook, which nbgrader's totals and `nbgrader export`
use: they must be this grader's, and the quiz must count in this run as the release was built to count it.
Where they differ the run is refused, saying what differs and the command that makes them agree; it never
grades with one build's points and reports another's.
"""

from __future__ import annotations

import json
from pathlib import Path

from .. import assignment, quiz, releases
from ..quiz import QuizCounting
from .course import CourseError, NbgraderCourse


def graded_build(course: NbgraderCourse, counting: QuizCounting) -> tuple[releases.Release, list[str]]:
    """The course's release to grade against, and notes on what in the course's source differs from it;
    CourseError when it is missing or disagrees with this grader or this run."""
    folder, build = course.release_folder(), rebuild_command(course)
    try:
        release = releases.read(folder, f"the course's release ({folder})")
    except FileNotFoundError as exc:
        raise CourseError(f"the course has no build of {course.assignment!r} to grade against ({exc}): run "
                          f"`{build}` in {course.root} first") from None
    found = differences(course.grade_cell_points(), counting)
    if found:
        raise CourseError("the course's build and this run would not give the same totals (the gradebook "
                          "holds what the course's release was built with):\n  " + "\n  ".join(found)
                          + f"\nTo make them agree: {reconciling(counting, build, found)}")
    return release, setup_notes(course, release, build)


def rebuild_command(course: NbgraderCourse) -> str:
    return f"nbgrader generate_assignment {course.assignment} --force"


def expected_points(counts_quiz: bool) -> dict[str, float]:
    """grade cell -> the points this grader's checks give it (the quiz's: 0 where it does not count). A part's
    points are its grader's (autograder.graders.points), which `make release` writes into the grader's own
    release: read there, the graders are not imported into this process."""
    from ..graders.quiz_key import ANSWERS

    found: dict[str, float] = {}
    for notebook in assignment.NOTEBOOKS:
        data = releases.grader_release().notebook(notebook) or b"{}"
        for cell in json.loads(data).get("cells", []):
            meta = assignment.nbgrader_metadata(cell)
            if assignment.is_grade_cell(cell) and str(meta.get("grade_id", "")).startswith(assignment.GRADE_CELL_PREFIX):
                found[meta["grade_id"]] = float(meta.get("points", 0))
    quiz_cell = assignment.part(quiz.PART).grade_cell
    found[quiz_cell] = quiz.POINTS_PER_QUESTION * len(ANSWERS) if counts_quiz else 0.0
    return found


def differences(recorded: dict[str, float], counting: QuizCounting) -> list[str]:
    """What the course's gradebook (`recorded`: grade cell -> points) says unlike this grader and this run."""
    expected = expected_points(counting.counts)
    found = []
    for cell, points in sorted(expected.items()):
        got = recorded.get(cell)
        if got is None:
            found.append(f"{cell}: not in the course's release (this grader gives it {points:g} points)")
        elif got != points and cell == assignment.part(quiz.PART).grade_cell:
            did = "counts it" if counting.counts else "leaves it out of the total"
            built = "0 points (built not to count)" if got == 0 else f"{got:g} points (built to count)"
            found.append(f"{cell}: this run {did} ({counting.source}), but the course's release gives it {built}")
        elif got != points:
            found.append(f"{cell}: {got:g} points in the course's release, {points:g} by this grader's checks")
    return found


def reconciling(counting: QuizCounting, build: str, found: list[str]) -> str:
    """The command (or the setting and the command) that makes the course's build and this run agree."""
    quiz_cell = assignment.part(quiz.PART).grade_cell
    if all(line.startswith(quiz_cell) for line in found):
        if counting.source.startswith("--"):
            to = "count" if counting.counts else "leave out"
            return (f"grade without {counting.source}, as the release was built; or, to {to} the quiz, set "
                    f"c.QuizRelease.counts = {counting.counts} in nbgrader_config.py and build the release again "
                    f"(`{build}`) before students fetch it")
        flag = "--no-quiz-counts" if counting.counts else "--quiz-counts"
        return (f"build the release again as nbgrader_config.py now says (`{build}`) before students fetch it, or "
                f"grade as it was built ({flag})")
    return (f"build the course's release again with this grader (`{build}` in the course folder: the build "
            "refuses points other than the graders'), or grade with the grader version the course was built with")


def setup_notes(course: NbgraderCourse, release: releases.Release, build: str) -> list[str]:
    """A note for each notebook whose setup cells in the course's source differ from its release's (the
    release's run: they are what the students have)."""
    notes = []
    for notebook in assignment.NOTEBOOKS:
        source = _setup_cells(_read(course.source_folder() / f"{notebook}.ipynb"))
        shipped = _setup_cells(json.loads(release.notebook(notebook) or b"{}"))
        if source is not None and source != shipped:
            notes.append(f"the setup cells of {notebook}.ipynb in the course's source ({course.source_folder()}) "
                         f"differ from its release's: the release's are the ones that run, as the students have "
                         f"them; to grade with the "
                         f"source's, build and release it again (`{build}`, then `nbgrader release_assignment "
                         f"{course.assignment}`)")
    return notes


def _read(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _setup_cells(notebook: dict | None) -> list[str] | None:
    """The code of a notebook's setup cells, in order (None: no notebook)."""
    if not isinstance(notebook, dict):
        return None
    cells = []
    for cell in notebook.get("cells", []):
        meta = assignment.nbgrader_metadata(cell)
        if cell.get("cell_type") == "code" and str(meta.get("grade_id", "")).startswith(assignment.SETUP_CELL_PREFIX) \
                and not meta.get("solution"):
            source = cell.get("source", "")
            cells.append(("".join(source) if isinstance(source, list) else str(source)).strip())
    return cells
