"""Our scores into an nbgrader course's gradebook, as if `nbgrader autograde` had run.

`record` runs nbgrader's own ``Autograde`` converter with one step replaced: instead of
executing the notebook (nbgrader's ``Execute``), ``ScoreFromReports`` writes each grade
cell's output from our reports (the part's checks, then the part's score as the cell's
value). Everything else is nbgrader's: the student and submission records (with the
submission's timestamp), the sanitised notebooks in ``autograded/<student>/<assignment>/``,
each grade cell's auto score, late penalties. So ``nbgrader export``, the formgrader and
``nbgrader generate_feedback`` show our scores and checks.

Then, through ``nbgrader.api.Gradebook``, every grade cell ``grade-<part>`` is checked to
hold its part's score (set here where a student deleted the cell), a submission we could
not grade is left for manual grading, and a student without a name gets their id as one.

While a run writes the gradebook, a few parts of nbgrader's code are replaced by faster ones that write the
same (`sped_up`: `SharedEngines`, `_cells_read_per_notebook`, `_grades_committed_per_notebook`,
`_metadata_schema_checked_once`), only with the library versions they were written for (`versions.WRITTEN_FOR`),
installed and removed by the run's own thread, never by the writer's (docs/performance.md says what each buys).
Nothing here changes the process's folder: nbgrader's converter works from the course's absolute root.
"""

from __future__ import annotations

import io
import json
import logging
import warnings
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterable, Iterator

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict, Unicode

from .. import assignment
from ..model.results import GradedSubmission
from ..reports import RESULTS_FILE
from ..reports.figures import figure_block, figure_svg, figure_text
from ..reports.gradecell import grade_cell_text
from .course import CourseError, NbgraderCourse
from ..versions import patches_apply


def read_report(reports: Path, student: str) -> GradedSubmission | None:
    """``reports/<student>/results.json``, or None."""
    try:
        return GradedSubmission.from_gradescope(json.loads((Path(reports) / student / RESULTS_FILE).read_text("utf-8")))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None


def _part_of(grade_id: str) -> str | None:
    return grade_id[len(assignment.GRADE_CELL_PREFIX):] if grade_id.startswith(assignment.GRADE_CELL_PREFIX) else None


MAX_CELL_FIGURES = 6  # pictures per grade cell


def figure_outputs(part: str, checks: list) -> list:
    """The pictures of a part's failed checks as ``display_data`` outputs (SVG, and the caption as
    text where SVG is not shown: JupyterLab shows none in an untrusted notebook); the formgrader
    and ``nbgrader generate_feedback`` show them under the checks' text, from their HTML form (the
    SVG with its caption as alternative text: nbconvert shows an SVG output as an <img> without any,
    and warns "Alternative text is missing"). A grade cell's score comes from its ``execute_result``
    alone, so these change no score."""
    from nbformat.v4 import new_output

    outputs: list = []
    for check in checks:
        for figure in check.figures if not check.passed else []:
            svg = figure_svg(figure, heading=f"{part}/{check.name}")
            if svg and len(outputs) < MAX_CELL_FIGURES:
                outputs.append(new_output("display_data", data={
                    "text/html": figure_block(figure, heading=f"{part}/{check.name}"), "image/svg+xml": svg,
                    "text/plain": f"[picture] {figure_text(figure)}"}))
    return outputs


def in_gradebook(score: float, points: float) -> float:
    """A part's score as its grade cell holds it: at most the cell's points (0 where the release leaves a
    self-check quiz out of the total; nbgrader refuses a score above them)."""
    return min(score, points)


class ScoreFromReports(NbGraderPreprocessor):
    """Takes the place of nbgrader's ``Execute`` in ``Autograde``: each grade cell ``grade-<part>``
    gets the output a grade cell would print and return under ``nbgrader autograde`` (the checks,
    then the pictures of failed ones, then the score), read from ``<reports>/<student>/results.json``;
    nothing is executed."""

    reports = Unicode("", help="folder of the grader's reports, one <id>/results.json each").tag(config=True)
    folders = Dict(help="student -> their reports folder in `reports` (the student id, made safe)").tag(config=True)

    def preprocess(self, nb, resources):
        from nbformat.v4 import new_output

        student = resources["nbgrader"]["student"]
        graded = read_report(Path(self.reports), self.folders.get(student, student))
        if graded is None:
            raise RuntimeError(f"no report for {student} in {self.reports}")
        scores = graded.part_scores()
        for cell in nb.cells:
            if not assignment.is_grade_cell(cell):
                continue
            grade_id = str(assignment.nbgrader_metadata(cell).get("grade_id", ""))
            part = _part_of(grade_id)
            if part not in scores:
                # not one of ours: nbgrader would have run it; we cannot, so a
                # person grades it (an error output scores 0, and is flagged below)
                cell.outputs = [new_output("error", ename="NotGraded", evalue=f"{grade_id}: not graded by the autograder",
                                           traceback=[])]
                continue
            points = float(assignment.nbgrader_metadata(cell).get("points", 0))
            counted = graded.counting.counts(part)
            cell.outputs = [
                new_output("stream", name="stdout", text=grade_cell_text(part, graded.checks_of(part), counted=counted)),
                *figure_outputs(part, graded.checks_of(part)),
                new_output("execute_result", data={"text/plain": f"{in_gradebook(scores[part][0], points):g}"},
                           execution_count=None),
            ]
        return nb, resources


@dataclass
class GradebookUpdate:
    """What ``record`` did."""

    written: list[str] = field(default_factory=list)  # students whose scores are in the gradebook
    manual: list[str] = field(default_factory=list)  # students left for manual grading (our grader failed)
    rejected: dict[str, str] = field(default_factory=dict)  # student -> why nbgrader's converter refused their notebook
    fixed: list[str] = field(default_factory=list)  # grade cells set here, not by nbgrader's converter
    errors: list[str] = field(default_factory=list)
    log: str = ""


def record(course: NbgraderCourse, reports: Path, students: Iterable[str],
           ungraded: Iterable[str] = (), folders: dict[str, str] | None = None,
           engines: "SharedEngines | None" = None) -> GradebookUpdate:
    """Write the scores of ``students`` (their reports are in ``reports``, in the folder ``folders``
    names, their id by default) into the course's gradebook and ``autograded/`` folder; ``ungraded``
    (our grader failed on them) and students without a report are left for manual grading. Calls that
    pass the same ``engines`` share its database engines (and the SQL they compiled). Where nothing has
    installed the speed-ups (`sped_up`), this call installs them in its own thread, and removes them."""
    if engines is None:
        with SharedEngines() as own:
            return record(course, reports, students, ungraded, folders, own)
    if not engines.sped_up:
        with sped_up(engines):
            return record(course, reports, students, ungraded, folders, engines)
    return _record(course, Path(reports).resolve(), students, set(ungraded), dict(folders or {}))


def _record(course: NbgraderCourse, reports: Path, students: Iterable[str], ungraded: set[str],
            folders: dict[str, str]) -> GradebookUpdate:
    students = sorted(students)
    update = GradebookUpdate()
    graded = [s for s in students if s not in ungraded and read_report(reports, folders.get(s, s)) is not None]
    update.manual = [s for s in students if s not in graded]
    if graded and not _run_autograde_converter(course, reports, graded, update, folders):
        # nbgrader stops a whole batch at some notebooks (metadata of a newer schema): one at a time,
        # so that such a notebook costs only its own student's entry
        update.log = ""
        for student in graded:
            alone = GradebookUpdate()
            if not _run_autograde_converter(course, reports, [student], alone, folders):
                update.rejected[student] = _why_rejected(alone.log)
            update.log += alone.log
        graded = [s for s in graded if s not in update.rejected]
        update.manual += sorted(update.rejected)
    _check_scores(course, reports, graded, update, folders)
    _leave_for_a_person(course, update.manual)
    _name_students(course, students)
    return update


def _autograde_preprocessors(app: Any) -> list:
    """The course's Autograde pipeline with nbgrader's Execute replaced by ScoreFromReports."""
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    configured = app.config.get("Autograde", {}).get("autograde_preprocessors")
    pipeline = list(configured) if configured else Autograde.class_traits()["autograde_preprocessors"].default()
    replaced = [ScoreFromReports if isinstance(pp, type) and issubclass(pp, Execute) else pp for pp in pipeline]
    if ScoreFromReports not in replaced:
        raise CourseError("the course's Autograde.autograde_preprocessors has no Execute step to replace")
    return replaced


def _why_rejected(log: str) -> str:
    """The gist of nbgrader's complaint, from its log."""
    lines = [line for line in log.splitlines() if line.strip() and not line.startswith("[INFO]")]
    gist = next((line for line in lines if "version" in line.lower() or "Error" in line), lines[0] if lines else "")
    return gist.removeprefix("[ERROR] ").strip()[:200] or "see nbgrader's log"


def _run_autograde_converter(course: NbgraderCourse, reports: Path, graded: list[str], update: GradebookUpdate,
                             folders: dict[str, str]) -> bool:
    """nbgrader's Autograde for `graded`; False when it failed (some, or all that came after one it
    would not read)."""
    from nbgrader.converters import Autograde, NbGraderException
    from traitlets.config import Config

    app = course.app
    config = Config()
    config.Autograde.autograde_preprocessors = _autograde_preprocessors(app)
    config.ScoreFromReports.reports = str(reports)
    config.ScoreFromReports.folders = folders
    # nbconvert checks the whole notebook against its schema after every step; once, after the last, will do
    # (nbconvert's own setting: nothing of it is replaced)
    config.Exporter.optimistic_validation = True
    app.update_config(config)
    coursedir = app.coursedir
    coursedir.assignment_id = course.assignment
    coursedir.student_id = "*"
    coursedir.notebook_id = "*"
    coursedir.student_id_exclude = ",".join(sorted(set(course.submissions()) - set(graded)))
    try:
        with _log_to_buffer(app) as log, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SQLAlchemy's autoflush warnings from inside nbgrader
            converter = Autograde(coursedir=coursedir, parent=app)
            converter.force = True
            converter.create_student = True
            try:
                converter.start()
                succeeded = True
            except NbGraderException:
                succeeded = False
    finally:
        coursedir.student_id_exclude = ""
    update.log = log.getvalue()
    return succeeded


@contextmanager
def _log_to_buffer(app: Any) -> Iterator[io.StringIO]:
    """nbgrader's log (its usual warnings included: a grade cell's checksum "has changed" because the
    gradebook's copy holds the hidden tests) goes to a buffer, shown only when something fails."""
    log = io.StringIO()
    handler = logging.StreamHandler(log)
    handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    saved_handlers, saved_level = list(app.log.handlers), app.log.level
    for h in saved_handlers:
        app.log.removeHandler(h)
    app.log.addHandler(handler)
    app.log.setLevel(logging.INFO)
    try:
        yield log
    finally:
        app.log.removeHandler(handler)
        for h in saved_handlers:
            app.log.addHandler(h)
        app.log.setLevel(saved_level)


_SCHEMA_VALIDATORS: dict[str, Any] = {}  # nbgrader's metadata schema (as JSON) -> its validator, checked once


@contextmanager
def _metadata_schema_checked_once() -> Iterator[None]:
    """nbgrader checks each cell's nbgrader metadata with ``jsonschema.validate``, which first checks
    the schema itself against jsonschema's metaschema, on every cell. For the converter's run, the same
    validation by a validator whose schema was checked once in this process (nbgrader's module is given
    it in place of the jsonschema module; nothing else changes). Only with the versions of nbgrader and
    jsonschema it was written for (`patches_apply`)."""
    import jsonschema
    from jsonschema.exceptions import best_match
    from nbgrader.nbgraderformat import common

    if not patches_apply("nbgrader", "jsonschema"):
        yield
        return
    checked = _SCHEMA_VALIDATORS

    def validate(instance: Any, schema: dict) -> None:
        key = json.dumps(schema, sort_keys=True)  # nbgrader reads its schema file afresh per notebook
        if key not in checked:
            cls = jsonschema.validators.validator_for(schema)
            cls.check_schema(schema)
            checked[key] = cls(schema)
        error = best_match(checked[key].iter_errors(instance))
        if error is not None:
            raise error

    saved = common.jsonschema
    common.jsonschema = SimpleNamespace(validate=validate)
    try:
        yield
    finally:
        common.jsonschema = saved


class SharedEngines:
    """nbgrader opens a new ``Gradebook``, with a new SQLAlchemy engine, for each step of each notebook, and
    each engine compiles every query afresh (SQLAlchemy caches compiled SQL per engine). While
    ``installed``, the gradebooks of one database share one engine, for as long as this object lives (a
    run's every batch); ``close`` (or leaving its ``with``) disposes of them. Only with the versions of
    nbgrader and SQLAlchemy it was written for (`patches_apply`); with others, nbgrader's own engines."""

    def __init__(self) -> None:
        self._engines: dict[str, Any] = {}
        self.sped_up = False  # whether `sped_up` has installed these, and the other speed-ups, now

    def __enter__(self) -> "SharedEngines":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @contextmanager
    def installed(self) -> Iterator[None]:
        from nbgrader import api

        if not patches_apply("nbgrader", "SQLAlchemy"):
            yield
            return
        create_engine = api.create_engine

        def shared(url: Any, **kwargs: Any) -> Any:
            key = json.dumps([str(url), kwargs], sort_keys=True, default=repr)
            if key not in self._engines:
                self._engines[key] = create_engine(url, **kwargs)
            return self._engines[key]

        api.create_engine = shared
        try:
            yield
        finally:
            api.create_engine = create_engine

    def close(self) -> None:
        for engine in self._engines.values():
            engine.dispose()
        self._engines.clear()


@contextmanager
def sped_up(engines: SharedEngines) -> Iterator[None]:
    """Every speed-up of this module installed, `engines` shared, for as long as it lasts. Each replaces a
    part of another library's module for the whole process: only the thread that owns the run (its main
    thread) enters and leaves this, around everything the gradebook's writer does on its own thread."""
    with engines.installed(), _metadata_schema_checked_once(), _cells_read_per_notebook(), \
            _grades_committed_per_notebook():
        engines.sped_up = True
        try:
            yield
        finally:
            engines.sped_up = False


@contextmanager
def _cells_read_per_notebook() -> Iterator[None]:
    """nbgrader's ``OverwriteCells`` looks up each cell of a notebook in the gradebook with a query of its
    own, and ``SaveAutoGrades`` each grade and comment: some ninety queries per notebook. For the
    converter's run, their gradebooks read all of a notebook's source cells (or graded cells, grades,
    comments) with one query per kind of cell, the first time one is asked for; a name not among them is
    looked up as nbgrader does (and is missing as it would be). Only with the versions of nbgrader and
    SQLAlchemy it was written for (`patches_apply`)."""
    from nbgrader import api
    from nbgrader.preprocessors import overwritecells, saveautogrades

    if not patches_apply("nbgrader", "SQLAlchemy"):
        yield
        return

    def in_notebook(db: Any, cell: Any, notebook: str, assignment: str) -> list:
        """(name, cell) of every cell of kind `cell` (SourceCell, GradeCell, ...) of a notebook."""
        return db.query(cell.name, cell) \
            .join(api.Notebook, api.Notebook.id == cell.notebook_id) \
            .join(api.Assignment, api.Assignment.id == api.Notebook.assignment_id) \
            .filter(api.Notebook.name == notebook, api.Assignment.name == assignment).all()

    def in_submission(db: Any, row: Any, cell: Any, notebook: str, assignment: str, student: str) -> list:
        """(cell name, row) of every `row` (Grade, Comment) of a student's notebook on a cell of kind `cell`."""
        return db.query(cell.name, row).join(cell, cell.id == row.cell_id) \
            .join(api.SubmittedNotebook, api.SubmittedNotebook.id == row.notebook_id) \
            .join(api.Notebook, api.Notebook.id == api.SubmittedNotebook.notebook_id) \
            .join(api.SubmittedAssignment, api.SubmittedAssignment.id == api.SubmittedNotebook.assignment_id) \
            .join(api.Assignment, api.Assignment.id == api.SubmittedAssignment.assignment_id) \
            .join(api.Student, api.Student.id == api.SubmittedAssignment.student_id) \
            .filter(api.Notebook.name == notebook, api.Assignment.name == assignment, api.Student.id == student).all()

    class ReadPerNotebook(api.Gradebook):
        def _read(self, key: tuple, name: str, kinds: tuple, rows_of: Callable[[Any], list]) -> Any:
            """The entry called `name` among the (name, entry) rows that `rows_of` gives for each kind of
            cell in `kinds`, read once for `key` (a kind that comes first keeps a name); None if absent."""
            found = self.__dict__.setdefault("_read_per_notebook", {})
            if key not in found:
                found[key] = {}
                for kind in kinds:
                    for cell_name, entry in rows_of(kind):
                        found[key].setdefault(cell_name, entry)
            return found[key].get(name)

        def find_source_cell(self, name: str, notebook: str, assignment: str) -> Any:
            return self._read(("source", notebook, assignment), name, (api.SourceCell,),
                              lambda cell: in_notebook(self.db, cell, notebook, assignment)) \
                or super().find_source_cell(name, notebook, assignment)

        def find_graded_cell(self, name: str, notebook: str, assignment: str) -> Any:
            return self._read(("graded", notebook, assignment), name, (api.GradeCell, api.TaskCell),
                              lambda cell: in_notebook(self.db, cell, notebook, assignment)) \
                or super().find_graded_cell(name, notebook, assignment)

        def find_grade(self, grade_cell: str, notebook: str, assignment: str, student: str) -> Any:
            return self._read(("grade", notebook, assignment, student), grade_cell, (api.GradeCell, api.TaskCell),
                              lambda cell: in_submission(self.db, api.Grade, cell, notebook, assignment, student)) \
                or super().find_grade(grade_cell, notebook, assignment, student)

        def find_comment(self, solution_cell: str, notebook: str, assignment: str, student: str) -> Any:
            return self._read(("comment", notebook, assignment, student), solution_cell,
                              (api.SolutionCell, api.TaskCell),
                              lambda cell: in_submission(self.db, api.Comment, cell, notebook, assignment, student)) \
                or super().find_comment(solution_cell, notebook, assignment, student)

    saved = overwritecells.Gradebook, saveautogrades.Gradebook
    overwritecells.Gradebook = saveautogrades.Gradebook = ReadPerNotebook
    try:
        yield
    finally:
        overwritecells.Gradebook, saveautogrades.Gradebook = saved


@contextmanager
def _grades_committed_per_notebook() -> Iterator[None]:
    """nbgrader's ``SaveAutoGrades`` commits after every grade and every comment it sets: some seventy
    synced SQLite commits per notebook. For the converter's run, its gradebook commits once, when the
    notebook's cells are done, in one flush of every change (the same records; none when it fails). Only
    with the versions of nbgrader and SQLAlchemy it was written for (`patches_apply`)."""
    from nbgrader.preprocessors import saveautogrades

    if not patches_apply("nbgrader", "SQLAlchemy"):
        yield
        return

    class CommittedWhenClosed(saveautogrades.Gradebook):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.db.commit = lambda: None  # SaveAutoGrades' calls; the session's own stays

        def __exit__(self, exc_type: Any, exc_value: Any, traceback: Any) -> None:
            del self.db.commit
            try:
                if exc_type is None:
                    self.db.commit()
            finally:
                super().__exit__(exc_type, exc_value, traceback)

    saved = saveautogrades.Gradebook
    saveautogrades.Gradebook = CommittedWhenClosed
    try:
        yield
    finally:
        saveautogrades.Gradebook = saved


def _check_scores(course: NbgraderCourse, reports: Path, graded: list[str], update: GradebookUpdate,
                  folders: dict[str, str]) -> None:
    """Every grade cell ``grade-<part>`` of every graded student holds that part's score."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(course.db_url, course.coursedir.course_id) as gb:
        for student in graded:
            report = read_report(reports, folders.get(student, student))
            scores = {part: got for part, (got, _) in (report.part_scores() if report else {}).items()}
            try:
                submission = gb.find_submission(course.assignment, student)
            except MissingEntry:
                update.errors.append(f"{student}: nbgrader wrote no submission record")
                continue
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    part = _part_of(grade.name)
                    if part in scores and grade.auto_score != in_gradebook(scores[part], grade.max_score):
                        grade.auto_score = in_gradebook(scores[part], grade.max_score)
                        grade.needs_manual_grade = grade.manual_score is not None
                        update.fixed.append(f"{student}/{notebook.name}/{grade.name}")
                    elif part not in scores and grade.cell.cell_type == "code":
                        grade.needs_manual_grade = True
            gb.db.commit()
            update.written.append(student)


def _leave_for_a_person(course: NbgraderCourse, students: list[str]) -> None:
    """Submissions we could not grade: no auto score, every grade cell waiting for a person."""
    from nbgrader.api import Gradebook

    if not students:  # the usual batch: no gradebook opened, no timestamp read
        return
    submitted = course.submissions()
    timestamps = {s: course.coursedir.get_existing_timestamp(str(submitted[s])) for s in students if s in submitted}
    with Gradebook(course.db_url, course.coursedir.course_id) as gb:
        for student in students:
            gb.update_or_create_student(student)
            timestamp = timestamps.get(student)
            submission = (gb.update_or_create_submission(course.assignment, student, timestamp=timestamp)
                          if timestamp else gb.update_or_create_submission(course.assignment, student))
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    grade.auto_score = None
                    grade.needs_manual_grade = True
            gb.db.commit()


def _name_students(course: NbgraderCourse, students: list[str]) -> None:
    """A student record without a name shows as "None, None" in the formgrader: give it the id as
    its last name (a roster imported with `nbgrader db student import` keeps its names)."""
    from nbgrader.api import Gradebook

    with Gradebook(course.db_url, course.coursedir.course_id) as gb:
        for student in students:
            record = gb.update_or_create_student(student)
            if record.first_name is None and record.last_name is None:
                gb.update_or_create_student(student, last_name=student, first_name="")


class GradebookWriter:
    """Writes scores into the gradebook as submissions come back (after a full grading with
    --nbgrader), in a thread of its own: nbgrader's work overlaps with the grading."""

    def __init__(self, course: NbgraderCourse, out: Path, folders: dict[str, str] | None = None):
        import queue
        import threading
        import time

        self.course, self.out = course, out
        self.folders = dict(folders or {})  # student -> reports folder (the id, made safe)
        self.students = {self.folders.get(s, s): s for s in course.submissions()}  # id -> student; not other PATHs
        self.update = GradebookUpdate()
        self.failure: BaseException | None = None
        self.started = time.perf_counter()
        self._queue: queue.Queue[GradedSubmission | None] = queue.Queue()
        self._engines = SharedEngines()  # every batch's, so that a query is compiled once per run
        self._speedups = ExitStack()  # entered here and left in `finish`, on the run's thread, never on the writer's
        self._speedups.enter_context(sped_up(self._engines))
        self._thread = threading.Thread(target=self._write, daemon=True)
        self._thread.start()

    def add(self, graded: GradedSubmission) -> None:
        if graded.id in self.students:
            self._queue.put(graded)

    def _write(self) -> None:
        import queue

        from ..model.results import Status

        done = False
        while not done:
            batch = [self._queue.get()]
            while True:  # everything that came back meanwhile: one run of nbgrader's converter for all
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            done = None in batch
            graded = [g for g in batch if g is not None]
            if not graded or self.failure is not None:
                continue
            try:
                found = record(self.course, self.out, [self.students[g.id] for g in graded],
                               ungraded={self.students[g.id] for g in graded if g.status is Status.GRADER_ERROR},
                               folders=self.folders, engines=self._engines)
            except Exception as exc:  # noqa: BLE001 - the reports stand; the run says why the gradebook does not
                self.failure = exc
                continue
            for name in ("written", "manual", "fixed", "errors"):
                getattr(self.update, name).extend(getattr(found, name))
            self.update.rejected.update(found.rejected)
            self.update.log += found.log

    def finish(self) -> tuple[bool, str, list[str]]:
        """Wait for the last batch; (success, a line for the run's closing summary, what went wrong, a line each:
        the run says them)."""
        import time

        from ..reports import write_atomically

        self._queue.put(None)
        self._thread.join()
        self._speedups.close()
        self._engines.close()
        if self.failure is not None:
            exc = self.failure
            return (False, f"Gradebook: NOT written ({type(exc).__name__}: {exc})",
                    [f"gradebook: could not write {self.course.db_url}: {type(exc).__name__}: {exc}"])
        update = self.update
        told = [f"gradebook: {error}" for error in update.errors]
        told += [f"gradebook: {student}: nbgrader's converter would not read the submitted notebook ({why}); left for "
                 "manual grading" for student, why in sorted(update.rejected.items())]
        if (update.errors or update.rejected) and update.log:
            write_atomically(self.out / "nbgrader-gradebook.log", update.log)
            told.append(f"gradebook: nbgrader's log is in {self.out / 'nbgrader-gradebook.log'}")
        coursedir = self.course.coursedir
        line = (f"Gradebook: {self.course.db_url} ({len(update.written)} submission(s) scored"
                + (f", {len(update.manual)} left for manual grading: {', '.join(sorted(update.manual))}"
                   if update.manual else "")
                + f"; autograded notebooks in {Path(coursedir.root) / coursedir.autograded_directory}"
                + f"; written while grading, {time.perf_counter() - self.started:.1f} s in all)")
        return not update.errors, line, told
