"""The nbgrader side of ``python -m autograder grade --nbgrader ASSIGNMENT``.

Run in an nbgrader course root, the grader

1. reads the course as nbgrader does (``nbgrader_config.py`` of the course
   root and of the usual Jupyter config folders) and lists the collected
   submissions, ``submitted/<student>/<assignment>/``;
2. grades them (``autograder.cli``), never in the students' kernels;
3. writes the scores into the course's gradebook with nbgrader's own
   ``Autograde`` converter, in which one step is replaced: instead of
   executing the notebook (nbgrader's ``Execute``), ``ScoreFromReports``
   writes each grade cell's output from our reports: the part's checks, then
   the part's score as the cell's value. Everything else is nbgrader's: the
   student and submission records (with the submission's timestamp), the
   sanitised notebooks in ``autograded/<student>/<assignment>/`` (locked
   cells and hidden tests restored from the gradebook), the auto score of
   each grade cell from its output (``nbgrader.utils.determine_grade``),
   "No response." comments, late penalties. So ``nbgrader export``, the
   formgrader and ``nbgrader generate_feedback`` show our scores and checks
   as if ``nbgrader autograde`` had run;
4. checks every grade cell ``grade-<part>`` through ``nbgrader.api.Gradebook``
   and sets its auto score to that part's score where nbgrader could not (a
   student deleted the grade cell), or marks the submission for manual
   grading where our grader could not grade it.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from traitlets import Unicode

from nbgrader.preprocessors import NbGraderPreprocessor

GRADE_PREFIX = "grade-"


class CourseError(Exception):
    """The current folder is not an nbgrader course ready to grade (no
    gradebook, assignment not generated, ...)."""


# --------------------------------------------------------------------------
# the course, as nbgrader sees it


@dataclass
class NbgraderCourse:
    """An nbgrader course root and one of its assignments."""

    root: Path
    assignment: str
    app: Any = field(repr=False)  # the nbgrader AutogradeApp that holds the course's configuration

    @property
    def coursedir(self):
        return self.app.coursedir

    @property
    def db_url(self) -> str:
        return self.coursedir.db_url

    def submissions(self) -> dict[str, Path]:
        """student id -> ``submitted/<student>/<assignment>/`` folder."""
        import glob

        pattern = self.coursedir.format_path(self.coursedir.submitted_directory, "*", self.assignment)
        found = sorted(Path(p) for p in glob.glob(pattern) if os.path.isdir(p))
        return {p.parent.name: p for p in found}

    def notebooks(self) -> dict[str, list[str]]:
        """notebook name -> its grade cells, as the gradebook knows them."""
        from nbgrader.api import Gradebook, MissingEntry

        try:
            with Gradebook(self.db_url, self.coursedir.course_id) as gb:
                assignment = gb.find_assignment(self.assignment)
                return {nb.name: sorted(c.name for c in nb.grade_cells) for nb in assignment.notebooks}
        except MissingEntry:
            raise CourseError(
                f"the gradebook ({self.db_url}) has no assignment {self.assignment!r}: run "
                f"`nbgrader generate_assignment {self.assignment}` in {self.root} first") from None

    def secret_folders(self) -> list[Path]:
        """What student code must not see while it is graded: other students'
        submissions, the autograded and feedback copies, the source with its
        solutions, the gradebook, the exchange. The whole course root when it
        holds none of what the sandboxes need (Python, torch, this package, the
        temporary folder); else its nbgrader folders one by one."""
        cd = self.coursedir
        folders = [Path(cd.root) / d for d in (cd.source_directory, cd.submitted_directory,
                                               cd.autograded_directory, cd.feedback_directory)]
        try:
            from nbgrader.exchange.default import Exchange

            folders.append(Path(Exchange(config=self.app.config).root))  # other students' submissions
        except Exception:  # noqa: BLE001 - a course without the default exchange
            pass
        root = Path(cd.root).resolve()
        if _safe_to_hide(root):
            folders.append(root)
        return [f.resolve() for f in folders if f.is_dir() and _safe_to_hide(f.resolve())]


def _needed_by_sandboxes() -> list[Path]:
    import torch

    here = Path(__file__).resolve().parent
    return [Path(p).resolve() for p in (sys.prefix, sys.base_prefix, os.path.dirname(os.__file__),
                                        os.path.dirname(torch.__file__), here, tempfile.gettempdir())]


def _safe_to_hide(folder: Path) -> bool:
    """Whether hiding ``folder`` leaves everything the sandboxes need visible."""
    if folder == Path(folder.anchor):
        return False
    return not any(needed == folder or folder in needed.parents for needed in _needed_by_sandboxes())


def open_course(assignment: str, root: Path | None = None) -> NbgraderCourse:
    """The nbgrader course whose root is ``root`` (default: the current
    folder), configured as ``nbgrader`` itself would be there."""
    from nbgrader.apps import AutogradeApp

    root = Path(root or Path.cwd()).resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise CourseError(f"{root} is not an nbgrader course root (no nbgrader_config.py): "
                          "run the grader there, or give paths instead of --nbgrader")
    saved_path, saved_cwd = list(sys.path), os.getcwd()
    os.chdir(root)  # nbgrader reads nbgrader_config.py of the current folder
    try:
        app = AutogradeApp()
        app.log_level = "WARN"
        app.initialize([])
    except SystemExit as exc:  # traitlets exits on a broken configuration
        raise CourseError(f"nbgrader could not read the configuration of {root} (exit {exc.code})") from None
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path  # nbgrader puts the course root first on sys.path
    app.coursedir.assignment_id = assignment
    course = NbgraderCourse(Path(app.coursedir.root).resolve(), assignment, app)
    db_url = course.db_url
    db_file = Path(db_url[len("sqlite:///"):]) if db_url.startswith("sqlite:///") else None
    if db_file is not None and not (db_file if db_file.is_absolute() else root / db_file).is_file():
        raise CourseError(f"{root} has no gradebook ({db_url}): run "
                          f"`nbgrader generate_assignment {assignment}` there first")
    # nbgrader runs tools of its environment by name (alembic, when it opens a
    # gradebook): this Python's bin folder first, even when it is not activated
    bindir = str(Path(sys.executable).parent)
    os.environ["PATH"] = os.pathsep.join([bindir] + [p for p in os.environ.get("PATH", "").split(os.pathsep)
                                                     if p and p != bindir])
    course.notebooks()  # fails early, with what to do, when the assignment was never generated
    return course


# --------------------------------------------------------------------------
# grade cell outputs from our reports


def grade_cell_text(part: str, tests: list[dict[str, Any]], problems: Iterable[str] = ()) -> str:
    """What a grade cell shows: each check of the part, and for a failed one
    what was checked, expected against got, and the likely mistake."""
    lines = [f"Note: {p}" for p in problems]
    earned = most = 0.0
    for test in tests:
        name = test["name"].split("/", 1)[1] if "/" in test["name"] else test["name"]
        passed = test["status"] == "passed"
        earned += float(test["score"])
        most += float(test["max_score"])
        lines.append(f"[{'passed' if passed else 'FAILED'}] {part}/{name} ({float(test['max_score']):g} points)")
        if not passed:
            lines += ["    " + line for line in str(test.get("output", "")).splitlines()]
    lines.append(f"{part}: {earned:g} / {most:g} points")
    return "\n".join(lines) + "\n"


def read_report(reports: Path, student: str) -> dict[str, Any] | None:
    """``reports/<student>/results.json`` (Gradescope format), or None."""
    try:
        return json.loads((Path(reports) / student / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def part_tests(report: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    by_part: dict[str, list[dict[str, Any]]] = {}
    for test in report.get("tests", []):
        by_part.setdefault(str(test["name"]).split("/", 1)[0], []).append(test)
    return by_part


def part_scores(report: Mapping[str, Any]) -> dict[str, float]:
    return {part: sum(float(t["score"]) for t in tests) for part, tests in part_tests(report).items()}


class ScoreFromReports(NbGraderPreprocessor):
    """Takes the place of nbgrader's ``Execute`` in ``Autograde``: each grade
    cell ``grade-<part>`` gets the output that ``autograder.notebook.grade_part``
    would print and return (the checks, then the score), read from
    ``<reports>/<student>/results.json``; nothing is executed."""

    reports = Unicode("", help="folder of the grader's reports, one <student>/results.json each").tag(config=True)

    def preprocess(self, nb, resources):
        from nbformat.v4 import new_output

        student = resources["nbgrader"]["student"]
        report = read_report(Path(self.reports), student)
        if report is None:
            raise RuntimeError(f"no report for {student} in {self.reports}")
        tests = part_tests(report)
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type != "code" or not meta.get("grade") or meta.get("solution"):
                continue
            grade_id = str(meta.get("grade_id", ""))
            part = grade_id[len(GRADE_PREFIX):] if grade_id.startswith(GRADE_PREFIX) else None
            if part not in tests:
                # not one of ours: nbgrader would have run it; we cannot, so a
                # person grades it (an error output scores 0, and is flagged below)
                cell.outputs = [new_output("error", ename="NotGraded", evalue=f"{grade_id}: not graded by the autograder",
                                           traceback=[])]
                continue
            score = sum(float(t["score"]) for t in tests[part])
            cell.outputs = [
                new_output("stream", name="stdout", text=grade_cell_text(part, tests[part])),
                new_output("execute_result", data={"text/plain": f"{score:g}"}, execution_count=None),
            ]
        return nb, resources


# --------------------------------------------------------------------------
# writing the gradebook


@dataclass
class GradebookUpdate:
    """What ``record`` did."""

    written: list[str] = field(default_factory=list)  # students whose scores are in the gradebook
    manual: list[str] = field(default_factory=list)  # students left for manual grading (our grader failed)
    fixed: list[str] = field(default_factory=list)  # grade cells set here, not by nbgrader's converter
    errors: list[str] = field(default_factory=list)
    log: str = ""


def _autograde_preprocessors(app) -> list:
    """The course's Autograde pipeline with nbgrader's Execute replaced by ScoreFromReports."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    configured = app.config.get("Autograde", {}).get("autograde_preprocessors")
    pipeline = list(configured) if configured else Autograde.class_traits()["autograde_preprocessors"].default()
    replaced = [ScoreFromReports if isinstance(pp, type) and issubclass(pp, Execute) else pp for pp in pipeline]
    if ScoreFromReports not in replaced:
        raise CourseError("the course's Autograde.autograde_preprocessors has no Execute step to replace")
    return replaced


def record(course: NbgraderCourse, reports: Path, students: Iterable[str],
           ungraded: Iterable[str] = ()) -> GradebookUpdate:
    """Write the scores of ``students`` (their reports are in ``reports``)
    into the course's gradebook and ``autograded/`` folder; ``ungraded``
    (our grader failed on them) and students without a report are left for
    manual grading."""
    import io
    import logging
    import warnings

    from nbgrader.converters import Autograde, NbGraderException
    from traitlets.config import Config

    reports = Path(reports).resolve()
    students, ungraded = sorted(students), set(ungraded)
    update = GradebookUpdate()
    graded = [s for s in students if s not in ungraded and read_report(reports, s) is not None]
    update.manual = [s for s in students if s not in graded]
    app = course.app

    if graded:
        config = Config()
        config.Autograde.autograde_preprocessors = _autograde_preprocessors(app)
        config.ScoreFromReports.reports = str(reports)
        app.update_config(config)
        coursedir = app.coursedir
        coursedir.assignment_id = course.assignment
        coursedir.student_id = "*"
        coursedir.notebook_id = "*"
        coursedir.student_id_exclude = ",".join(sorted(set(course.submissions()) - set(graded)))
        # nbgrader's log (its usual warnings included: a grade cell's
        # checksum "has changed" because the gradebook's copy holds the
        # hidden tests) goes to a buffer, shown only when something fails
        log = io.StringIO()
        handler = logging.StreamHandler(log)
        handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
        saved_handlers, saved_level = list(app.log.handlers), app.log.level
        for h in saved_handlers:
            app.log.removeHandler(h)
        app.log.addHandler(handler)
        app.log.setLevel(logging.INFO)
        saved_cwd = os.getcwd()
        os.chdir(course.root)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SQLAlchemy's autoflush warnings from inside nbgrader
                converter = Autograde(coursedir=coursedir, parent=app)
                converter.force = True
                converter.create_student = True
                converter.start()
        except NbGraderException as exc:
            update.errors.append(f"nbgrader could not write every submission ({exc or 'see its log'})")
        finally:
            os.chdir(saved_cwd)
            app.log.removeHandler(handler)
            for h in saved_handlers:
                app.log.addHandler(h)
            app.log.setLevel(saved_level)
            coursedir.student_id_exclude = ""
        update.log = log.getvalue()

    _check_and_complete(course, reports, graded, update)
    return update


def _check_and_complete(course: NbgraderCourse, reports: Path, graded: list[str], update: GradebookUpdate) -> None:
    """Through ``nbgrader.api.Gradebook``: every grade cell ``grade-<part>`` of
    every graded student holds that part's score; submissions we could not
    grade wait for a person."""
    from nbgrader.api import Gradebook, MissingEntry

    timestamps = {s: course.coursedir.get_existing_timestamp(str(p)) for s, p in course.submissions().items()}
    with Gradebook(course.db_url, course.coursedir.course_id) as gb:
        for student in graded:
            scores = part_scores(read_report(reports, student) or {})
            try:
                submission = gb.find_submission(course.assignment, student)
            except MissingEntry:
                update.errors.append(f"{student}: nbgrader wrote no submission record")
                continue
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    part = grade.name[len(GRADE_PREFIX):] if grade.name.startswith(GRADE_PREFIX) else None
                    if part in scores and grade.auto_score != scores[part]:
                        grade.auto_score = scores[part]
                        grade.needs_manual_grade = grade.manual_score is not None
                        update.fixed.append(f"{student}/{notebook.name}/{grade.name}")
                    elif part not in scores and grade.cell.cell_type == "code":
                        grade.needs_manual_grade = True
            gb.db.commit()
            update.written.append(student)
        for student in update.manual:
            gb.update_or_create_student(student)
            timestamp = timestamps.get(student)
            submission = (gb.update_or_create_submission(course.assignment, student, timestamp=timestamp)
                          if timestamp else gb.update_or_create_submission(course.assignment, student))
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = None
                    grade.needs_manual_grade = True
            gb.db.commit()
