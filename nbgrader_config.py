# nbgrader configuration for this course. Run nbgrader from this folder:
#
#     nbgrader generate_assignment attention --force   # or: make release
#
# nbgrader reads this file from the current folder only.
import os
import sys

from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import ClearSolutions

from autograder.nbgrader.kernelinfo import KernelInfo
from autograder.nbgrader.points import PartPoints
from autograder.nbgrader.quizrelease import QuizRelease
from autograder.nbgrader.stubs import ClearSolutionsPerNotebook

c = get_config()  # noqa: F821 (provided by traitlets when it loads this file)

# nbgrader starts programs of its own environment by name (`alembic`, when it creates gradebook.db):
# find them beside the Python that runs it, also when it is called by its path with no environment active.
_bin = os.path.dirname(sys.executable)
if _bin not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = _bin + os.pathsep + os.environ.get("PATH", "")

# The course root is this folder: assignments/ holds the nbgrader source,
# release/ the student version, gradebook.db the gradebook (not committed).
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.source_directory = "assignments"
c.CourseDirectory.release_directory = "release"
# Nothing but the notebooks and their public helpers (selfcheck.py,
# quizcheck.py) may ship; these never do.
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    ".pytest_cache",
    ".DS_Store",
]
# The exchange needs a course id; set yours here (or on the command line with
# --CourseDirectory.course_id=...).
# c.CourseDirectory.course_id = "attention"

# Code stubs. nbgrader's ClearSolutions.code_stub is one stub per *language*
# for the whole run, but the two notebooks need different ones:
#
# * attention.ipynb: solution regions sit inside function bodies, so the stub
#   must raise NotImplementedError (the self-checks then say "not implemented
#   yet");
# * quiz.ipynb: each answer cell is `answer_qNN = None  # ...` followed by a
#   solution region, so the stub must be a harmless comment: the released quiz
#   then runs top to bottom and every check says "not answered yet".
#
# ClearSolutionsPerNotebook is nbgrader's own ClearSolutions, unchanged except
# that `notebook_code_stubs` (notebook id -> {language: stub}) overrides
# `code_stub` for the notebooks it names. It takes ClearSolutions' place in
# nbgrader's default generate_assignment pipeline, so a single
# `nbgrader generate_assignment attention` (or the formgrader's "Generate"
# button) gives both notebooks their stubs and records both in the gradebook.
#
# PartPoints (first) refuses a notebook whose grade cells or table of sections
# give a part other points than its grader's checks, where points are set
# (docs/adapting.md); QuizRelease (next, so that nbgrader records what it
# builds) builds the quiz in the mode set below, and writes the released
# quizcheck.py.
#
# KernelInfo (last) writes into each released notebook the language_info a
# kernel on this Python reports: without it JupyterLab rewrites that metadata
# when the notebook connects to its kernel, and every student's notebook opens
# marked as modified.
c.GenerateAssignment.preprocessors = [PartPoints, QuizRelease] + [
    ClearSolutionsPerNotebook if pp is ClearSolutions else pp
    for pp in GenerateAssignment.class_traits()["preprocessors"].default()
] + [KernelInfo]
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutionsPerNotebook.notebook_code_stubs = {
    "quiz": {"python": "# YOUR ANSWER HERE"},
}

# The quiz's mode: the one place it is set (`make release` and
# `nbgrader generate_assignment` both read it here; the release records it in
# quiz.ipynb's metadata, where the grader reads it).
#
# * "self-check" (formative): quizcheck.py tells students at once whether an
#   answer is right and why; its digests of the answers can be inverted, so a
#   self-check quiz's points go to anyone who tries.
# * "counted": the release holds no key material (no digest, no explanation);
#   the check cells record the answer and say that the quiz is marked after the
#   deadline, by the hidden key (autograder/graders/quiz_key.py).
#
# shuffle = True shows each question's options in an order drawn from the
# course secret: set $AUTOGRADER_SECRET when you build the release (make
# release, nbgrader generate_assignment) to the secret you grade with. The
# secret is never written into the release.
c.QuizRelease.mode = "self-check"
c.QuizRelease.shuffle = False
#
# Whether the grader counts the quiz's points in the total (grades.csv,
# results.json's score): None follows the mode (a counted quiz counts; a
# self-check quiz is reported in its own column but left out of the total).
# `python -m autograder grade --quiz-counts` / `--no-quiz-counts` overrides it.
c.QuizRelease.counts = None

# Autograding (nbgrader autograde) runs every cell of a submission in a fresh
# kernel; a grade cell runs the hidden graders for one part, which takes longer
# than nbgrader's default limit of 30 s per cell.
c.Execute.timeout = 600
