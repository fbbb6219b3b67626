"""Grading from inside an nbgrader grade cell, for courses that run `nbgrader autograde`.

nbgrader runs the whole notebook in one kernel, then the grade cell. The cell calls
`grade_part`, which reads the saved notebook (nbgrader autogrades the file it collected), keeps
its answer cells and the setup cells of the course's release, and grades them as the command-line grader does:
with the course secret ($AUTOGRADER_SECRET) and the student's id, so the same student gets the
same inputs, and the same score, both ways. It runs in the student's kernel, without a sandbox:
`python -m autograder grade --nbgrader` is the safe way. The return value is the cell's partial
credit.

Without a course secret ($AUTOGRADER_SECRET unset or empty where nbgrader runs) the part is graded all the
same, with inputs drawn from an empty secret, and the cell's output says so first (on stdout: nbgrader
gives a grade cell that writes to stderr no points). nbgrader's own log shows nothing a kernel prints, so
the autograded notebook (the formgrader's view of it) is where an instructor sees it.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import quiz, releases
from .counting import quiz_counting
from ..engine.session import Job, grade_one, in_process_backend
from ..model.submission import read_submission
from ..isolation.limits import Limits
from ..reports.gradecell import grade_cell_text


def student_id() -> str:
    """The student whose work nbgrader is autograding: it runs the notebook in
    ``autograded/<student>/<assignment>/``. Elsewhere (an instructor trying the source notebook)
    there is no student: ``notebook``."""
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        return Path.cwd().parent.name
    return "notebook"


def course_root() -> Path:
    """The course nbgrader runs in: the nearest folder, from the current one up, with an nbgrader_config.py
    (nbgrader autogrades in ``<course>/autograded/<student>/<assignment>/``); else the current folder."""
    here = Path.cwd()
    return next((folder for folder in (here, *here.parents) if (folder / quiz.COURSE_CONFIG).is_file()), here)


SECRET_VARIABLE = "AUTOGRADER_SECRET"


def secret_warning(secret: str) -> str:
    """What a grade cell prints first when the course secret is empty ("" when there is one)."""
    if secret:
        return ""
    return (f"Warning: ${SECRET_VARIABLE} is not set where nbgrader autograded this notebook: the score below was "
            "computed with inputs drawn from an empty course secret, which anyone can reproduce. Set it in the "
            "environment of the server or terminal that runs nbgrader, or grade with `python -m autograder "
            "grade --nbgrader ASSIGNMENT`, which refuses to grade without one.\n")


def course_release() -> releases.Release | None:
    """While nbgrader autogrades in a course, the course's own build (``<course>/release/<assignment>/``, which
    the students fetched), as `grade --nbgrader` grades against it; None elsewhere, or where it is missing."""
    if os.environ.get("NBGRADER_EXECUTION") != "autograde":
        return None
    try:
        return releases.read(course_root() / "release" / Path.cwd().name, "the course's release")
    except FileNotFoundError:
        return None


def grade_part(part: str, notebook: str = "attention.ipynb") -> float:
    """Points earned on `part` by the notebook `notebook` in the current folder, with feedback printed;
    0 for a part the course leaves out of the total (a self-check quiz, whose release gives it no points)."""
    secret = os.environ.get(SECRET_VARIABLE, "")
    print(secret_warning(secret), end="")  # stdout: output on stderr would cost the cell its points
    release = course_release()
    submission = read_submission(Path(notebook), student_id(), release)
    graded = grade_one(Job(submission, secret, (part,)), in_process_backend(), Limits(), release)
    print(grade_cell_text(part, graded.checks_of(part), submission.problems), end="")
    score = graded.part_scores().get(part, (0.0, 0.0))[0]
    if part == quiz.PART and not quiz_counting(None, course_root()).counts:
        print(f"Reported, not counted: this course leaves the {quiz.PART} out of the total ({score:g} shown above).")
        return 0.0
    return score
