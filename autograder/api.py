"""The public Python API: grade a class, grade one submission, export the grades, read the results back.

Everything the command line does, as functions that return values: nothing here prints, exits or parses
options. What a class run says (a missing secret, a weaker sandbox, notes) is in its outcome's `lines`, and
goes, as it happens, wherever `RunOptions.tell` sends it; `RunOptions.on_progress` hears of each submission
graded. The command line (`python -m autograder`), the demo (`make demo`) and the bench call these; a script
or a notebook of the course's staff can too:

    from autograder.api import RunOptions, grade_class
    outcome = grade_class(RunOptions(out=Path("reports"), paths=(Path("submissions"),), secret="s3cret"))

The value types a caller meets (`RunOptions`, `RunOutcome`, `GradedSubmission`, `CheckResult`, ...) and
the errors raised (`RunError`, `RunInterrupted`, `ExportError`, `ResultsError`) are importable from here.

Gradescope's `run_autograder` (`python -m autograder gradescope --run`) sits below this module in the
package's layers (tests/unit/test_layers.py): it grades its upload with the class run itself, as
`grade_submission` does.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from . import assignment
from .classrun import RunError, RunInterrupted, RunOptions, RunOutcome, closing_lines, run_class
from .engine.slots import usable_cpus
from .gradescope import GradescopeError, Settings as GradescopeSettings, build as build_gradescope_zip, \
    run as run_in_gradescope
from .isolation.confinement import keep_memory_private as keep_memory_private  # for the command line
from .isolation.limits import BUDGET_SECONDS, Limits
from .model.files import RESULTS_FILE, write_atomically
from .model.results import VISIBILITIES, CheckResult, Counting, GradedSubmission, Status, Visibility
from .model.students import LayoutError, held_by
from .model.tampering import Tampering
from .pool.batch import FINGERPRINT_FILE
from .reports import GRADES_FILE
from .reports.items import ITEMS_FILE, OPTIONS_FILE, item_analysis
from .reports.lms import MOODLE_OUT_OF, ClassScores, Export, ExportError, exports, read_roster, score_text, \
    scores_from_gradebook, scores_from_grades_csv
from .reports.similarity import DEFAULT_THRESHOLD as SIMILARITY_THRESHOLD

__all__ = [
    "grade_class", "grade_submission", "export_grades", "read_results", "closing_lines",
    "RunOptions", "RunOutcome", "GradedSubmission", "CheckResult", "Counting", "Visibility", "Status",
    "Export", "Exported", "Results",
    "RunError", "RunInterrupted", "ExportError", "ResultsError",
    # Gradescope: the autograder zip, and the run inside it
    "build_gradescope_zip", "run_in_gradescope", "GradescopeSettings", "GradescopeError",
    # what a front end offers as defaults and shows (the command line's options, the demo's tables); `Limits`,
    # `BUDGET_SECONDS` and `keep_memory_private` are importable too (their modules are not on the docs site)
    "VISIBILITIES", "SIMILARITY_THRESHOLD", "MOODLE_OUT_OF", "usable_cpus",
    "score_text", "item_analysis", "ITEMS_FILE", "OPTIONS_FILE", "dask_security",
]

PathLike = str | os.PathLike[str]


def dask_security(ca_file: str | None, cert: str | None, key: str | None) -> Any:
    """`RunOptions.dask_security` for a tls:// scheduler: mutual TLS from these files (None for all three:
    Dask's own configuration decides). Dask is imported only here, when asked."""
    from .pool.cluster import security

    return security(ca_file, cert, key)


class ResultsError(ValueError):
    """A folder that holds no results the grader wrote, or a results.json that does not read."""


# --------------------------------------------------------------------------
# grading


def grade_class(options: RunOptions) -> RunOutcome:
    """Grade a class as `options` say, as `python -m autograder grade` does: every submission's reports
    (results.json, feedback.html) in `options.out/<id>/`, the class's (grades.csv, the class report, the item
    statistics) in `options.out`, an nbgrader course's gradebook filled with `options.nbgrader`.

    Submissions whose reports are up to date are kept, not graded again (unless `options.force`). Returns the
    run's outcome: every submission's result and whether any could not be graded (`RunOutcome.status`).
    Raises `RunError` when the run cannot start or go on (its `status` is the command line's exit status),
    `RunInterrupted` on Ctrl-C (what was graded is kept). Paths may be given as strings."""
    return run_class(replace(options, out=Path(options.out), paths=tuple(Path(p) for p in options.paths),
                             course_root=None if options.course_root is None else Path(options.course_root)))


def grade_submission(path: PathLike, *, secret: str | None = None, parts: Sequence[str] = assignment.PART_NAMES,
                     out: PathLike | None = None, call_seconds: float = Limits.call_seconds,
                     budget_seconds: float = BUDGET_SECONDS, visibility: Visibility | None = None,
                     quiz_counts: bool | None = None, course_root: PathLike | None = None, force: bool = False,
                     allow_weak: bool = False) -> GradedSubmission:
    """Grade one student's submission (a notebook, a .py module, a folder or a zip of their files) and
    return its result: each check's score and feedback, the total, the status.

    For trying a submission, or a grader, without a class: it is graded as a class of one, in the same
    sandboxes. Its reports go into `out/<id>/` when `out` is given (and are reused there unless `force`),
    else into a temporary folder that is removed. `visibility`: when Gradescope shows each check in its
    results.json (default: at once). `secret` seeds the student's inputs (None: an empty one,
    with a warning on stderr); `quiz_counts` None reads the course's nbgrader_config.py in `course_root`
    (default: the current folder). Raises `RunError` for a path that holds several students' work (grade it
    with `grade_class`) or that cannot be graded at all."""
    path = Path(path)
    try:
        parts = assignment.parse_parts(",".join(parts))
    except ValueError as exc:
        raise RunError(str(exc)) from None
    if not os.path.lexists(path):
        raise RunError(f"{path}: no such file or folder")
    try:
        held = held_by(path)
    except LayoutError as exc:
        raise RunError(str(exc)) from None
    if len(held.students) != 1:
        raise RunError(f"{path} holds the work of {len(held.students)} students, not one: grade it with grade_class")

    def grade(folder: Path) -> GradedSubmission:
        options = RunOptions(out=folder, paths=(path,), secret=secret, parts=parts, call_seconds=call_seconds,
                             budget_seconds=budget_seconds, visibility=visibility or Visibility(), quiz_counts=quiz_counts,
                             course_root=None if course_root is None else Path(course_root), force=force,
                             progress=False, similarity=None, allow_weak=allow_weak)
        graded = run_class(options).graded
        if len(graded) != 1:
            raise RunError(f"{path}: {len(graded)} submissions graded, where one was expected", 1)
        return graded[0]

    if out is not None:
        return grade(Path(out))
    with tempfile.TemporaryDirectory(prefix="autograder-submission-") as folder:
        return grade(Path(folder))


# --------------------------------------------------------------------------
# exporting


@dataclass(frozen=True)
class Exported:
    """What `export_grades` wrote: each file, Canvas's first, with what it holds (its text, how many students,
    out of what, its own warnings), and the warnings about the class as a whole."""

    files: dict[Path, Export]
    warnings: tuple[str, ...] = ()

    @property
    def every_warning(self) -> list[str]:
        """The class's warnings, then each file's: what to read before importing the files."""
        return [*self.warnings, *(w for export in self.files.values() for w in export.warnings)]


def export_grades(roster: PathLike, *, grades: PathLike | None = None, nbgrader: str | None = None,
                  course_root: PathLike | None = None, canvas: PathLike | None = None,
                  moodle: PathLike | None = None, name: str | None = None, per_part: bool = False,
                  moodle_id: str | None = None, moodle_out_of: float | None = MOODLE_OUT_OF,
                  skip_unmapped: bool = False) -> Exported:
    """Write the class's grades as the CSV files Canvas's and Moodle's gradebooks import, as
    `python -m autograder export` does, and return what was written.

    The scores come from a run's `grades` (its grades.csv, or the folder holding it: no late penalty) or
    from the gradebook of the nbgrader course in `course_root` (default: the current folder) for the
    assignment `nbgrader` (late penalties taken off as `nbgrader export` takes them off); `roster` maps our
    ids to the LMS's (docs/lms.md). `canvas` and `moodle` are the files to write, one or both; `name` is
    the LMS's assignment or grade item (default: the assignment's). Raises `ExportError` for input that
    cannot be exported as it is, with what and where."""
    if (grades is None) == (nbgrader is None):
        raise ExportError("export: give one of grades (a grades.csv or its folder) and nbgrader (an assignment)")
    targets = [Path(p) for p in (canvas, moodle) if p is not None]
    if not targets:
        raise ExportError("export: give a Canvas file, a Moodle file or both to write")
    if per_part and moodle is None:
        raise ExportError("export: per_part is for Moodle (Canvas takes one column per assignment)")
    source = Path(grades) / GRADES_FILE if grades is not None and Path(grades).is_dir() else grades
    written = {p.resolve() for p in targets}
    if len(written) < len(targets) or written & {Path(p).resolve() for p in (roster, source) if p is not None}:
        raise ExportError("export: the Canvas file, the Moodle file, the roster and grades.csv must be different files")
    scores = scores_from_grades_csv(Path(grades)) if grades is not None else _gradebook_scores(nbgrader or "",
                                                                                               course_root)
    made, warnings = exports(scores, read_roster(Path(roster)), canvas=canvas is not None, moodle=moodle is not None,
                             name=name or nbgrader or assignment.ASSIGNMENT, per_part=per_part, moodle_id=moodle_id,
                             moodle_out_of=moodle_out_of, skip_unmapped=skip_unmapped)
    files: dict[Path, Export] = {}
    for export, path in zip(made, targets):
        try:
            write_atomically(path, export.text)
        except OSError as exc:
            raise ExportError(f"{path}: cannot write it ({exc.strerror or exc})") from None
        files[path] = export
    return Exported(files, tuple(warnings))


def _gradebook_scores(name: str, course_root: PathLike | None) -> ClassScores:
    """The scores of assignment `name` in the gradebook of the nbgrader course at `course_root`."""
    from .nbgrader.course import CourseError, open_course  # nbgrader's import is for this source alone

    try:
        course = open_course(name, None if course_root is None else Path(course_root))
    except CourseError as exc:
        raise ExportError(str(exc)) from None
    return scores_from_gradebook(course.db_url, course.coursedir.course_id, name)


# --------------------------------------------------------------------------
# reading results


@dataclass(frozen=True)
class Results:
    """A run's results, read back from its reports folder."""

    folder: Path
    submissions: dict[str, GradedSubmission] = field(default_factory=dict)  # by id, in id order
    grades: list[dict[str, str]] = field(default_factory=list)  # grades.csv's rows as written (none without one)

    def __getitem__(self, id: str) -> GradedSubmission:  # noqa: A002 - a submission's id, as everywhere
        return self.submissions[id]


def read_results(folder: PathLike) -> Results:
    """Read a run's results back from its reports folder (a `grade_class` run's `out`): each submission's
    results.json as a `GradedSubmission` (with what it tried, tampering, from the grader's own record beside
    it), and grades.csv's rows. A results.json file, Gradescope's for one upload, is read alone.

    For scripts that look at a class's results after the run, or at an earlier run's. Raises
    `ResultsError` where there are no results or a results.json does not read."""
    folder = Path(folder)
    if folder.is_file() and folder.name == RESULTS_FILE:
        graded = _read_submission(folder)
        return Results(folder.parent, {graded.id: graded})
    if not folder.is_dir():
        raise ResultsError(f"{folder}: no such folder")
    found = [_read_submission(report) for report in sorted(folder.glob(f"*/{RESULTS_FILE}"))]
    rows = _read_grades(folder / GRADES_FILE)
    if not found and rows is None:
        raise ResultsError(f"{folder}: no results in it (no <submission>/{RESULTS_FILE}, no {GRADES_FILE})")
    return Results(folder, {g.id: g for g in sorted(found, key=lambda g: g.id)}, rows or [])


def _read_submission(report: Path) -> GradedSubmission:
    try:
        graded = GradedSubmission.from_gradescope(json.loads(report.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ResultsError(f"{report}: not a results.json the grader wrote ({type(exc).__name__}: {exc})") from None
    graded.id = graded.id or report.parent.name
    try:
        record = json.loads((report.parent / FINGERPRINT_FILE).read_text(encoding="utf-8"))
        graded.tampering = Tampering.from_json(record.get("tampering"))
        graded.restore_answers(record.get("answers"))
    except (OSError, UnicodeDecodeError, ValueError, TypeError, AttributeError):
        pass  # results.json alone (Gradescope's, or copied out): nothing tried is known, no option chosen
    return graded


def _read_grades(path: Path) -> list[dict[str, str]] | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultsError(f"{path}: cannot read it ({exc})") from None
    return list(csv.DictReader(io.StringIO(text)))
