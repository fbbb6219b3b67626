"""Grades for a learning-management system: the CSV files that Canvas's and Moodle's gradebooks
import, from our grades.csv or from an nbgrader gradebook, with a roster that says who each of our
ids is in the LMS.

One job: scores + roster -> each LMS's CSV text. Reading the command line, the course and writing
the files is the CLI's (`python -m autograder export`).

The formats are what the importers read, so the importers are the reference:

* Canvas, "How do I import grades in the Gradebook?" (Canvas Instructor Guide,
  community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807) and
  Canvas's importer, ``app/models/gradebook_importer.rb`` (instructure/canvas-lms): the header row
  must begin ``Student,ID`` and end its student columns with ``Section`` (``SIS User ID,SIS Login ID``
  between); a row whose first cell holds ``Points Possible`` gives each assignment column its points;
  an assignment column titled ``Name (123)`` updates assignment 123, a plain title the assignment of
  that title, or a new one; a student is found by ``ID`` (Canvas's user id), then ``SIS User ID``,
  then ``SIS Login ID``, and only then by name; an empty cell (or ``-``) is no score.
* Moodle, "Grade import" (docs.moodle.org/en/Grade_import) and Moodle's importer,
  ``grade/import/csv/classes/load_data.php``: one column identifies the user ("Map from" a column
  "Map to" username, useridnumber or useremail), every other column can be mapped to a grade item
  or to a new one named by its header; ``-`` is no grade (an empty cell is a grade for a new item);
  a grade above 100 is refused unless the site allows unlimited grades. So the total is written out
  of 100 unless asked otherwise (``--moodle-out-of N``, ``--moodle-points``).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Sequence, overload

from .. import assignment
from ..model.results import Status
from ..text import FORMULA_STARTS, spreadsheet_safe
from . import table


class ExportError(Exception):
    """Input that cannot be exported as it is (a missing file, an unknown column, a duplicate or
    unmapped id): the message says what and where, and the command exits with status 2."""


# --------------------------------------------------------------------------
# scores


@dataclass(frozen=True)
class StudentScore:
    """One student's (or submission's) scores. ``total`` is after any late penalty; None when there is
    no score yet (``pending`` says why), which the LMS files write as "no score", never as 0."""

    id: str
    total: float | None
    parts: dict[str, float | None] = field(default_factory=dict)  # before any late penalty
    late_penalty: float = 0.0
    pending: str = ""


@dataclass(frozen=True)
class ClassScores:
    """Everyone's scores for one assignment, out of ``max_score``; ``parts`` in assignment order."""

    max_score: float
    parts: tuple[str, ...]
    students: tuple[StudentScore, ...]
    source: str  # where they were read, for messages
    uncounted: tuple[str, ...] = ()  # parts graded but left out of the total (a self-check quiz)

    @property
    def counted_parts(self) -> tuple[str, ...]:
        """The parts whose scores make up the total: the only ones an LMS may add up."""
        return tuple(p for p in self.parts if p not in self.uncounted)


GRADES_COLUMNS = ("submission", "total", "max", "status")


def scores_from_grades_csv(path: Path) -> ClassScores:
    """The scores in our grades.csv (see ``reports/table.py``); a folder means its grades.csv. It
    knows nothing of due dates: no late penalty is applied (use the nbgrader gradebook for that).
    A submission we could not grade ("grader error") has no score; a file from a run that did not
    grade every part, or whose rows have different maxima, is refused: its totals are not the
    assignment's."""
    path = Path(path)
    if path.is_dir():
        path = path / "grades.csv"
    reader = csv.reader(io.StringIO(_read(path, "grades.csv")))
    header = [h.strip() for h in next(reader, [])]
    _check_header(path, header, required=GRADES_COLUMNS, known=table.COLUMNS,
                  what="grades.csv has submission, the parts, total, max, status and tampering")
    missing_parts = [p for p in assignment.PART_NAMES if p not in header]
    if missing_parts:
        raise ExportError(f"{path}: no column for the part(s) {', '.join(missing_parts)}: "
                          "an export needs every part's score (grade the whole assignment)")
    students: list[StudentScore] = []
    maxima: set[float] = set()
    left_out: set[str] = set()
    for line, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        row = _row(path, line, header, cells)
        sid = _unneutralised(row["submission"])
        if not sid:
            raise ExportError(f"{path}, line {line}: empty submission id")
        if row["status"].startswith(Status.GRADER_ERROR.value):
            students.append(StudentScore(sid, None, {p: None for p in assignment.PART_NAMES},
                                         pending="grader error"))
            continue
        parts = {p: _number(path, line, p, row[p], empty_ok=True) for p in assignment.PART_NAMES}
        ungraded = [p for p, v in parts.items() if v is None]
        if ungraded:
            raise ExportError(f"{path}, line {line}: {sid} has no score for {', '.join(ungraded)}: grades.csv is "
                              "from a run that did not grade every part (--parts); grade the whole assignment first")
        maxima.add(_number(path, line, "max", row["max"]))
        left_out.add(row.get("not_in_total", "").strip())
        students.append(StudentScore(sid, _number(path, line, "total", row["total"]), parts))
    _check_unique(path, [s.id for s in students], "submission id")
    if not maxima:
        raise ExportError(f"{path}: no graded submission in it: nothing to export")
    if len(maxima) > 1:
        raise ExportError(f"{path}: the rows are out of different maxima ({', '.join(map(score_text, sorted(maxima)))}): "
                          "grade every submission with every part, then export")
    if len(left_out) > 1:
        raise ExportError(f"{path}: the rows leave different parts out of their totals (not_in_total: "
                          f"{', '.join(repr(p) for p in sorted(left_out))}): grade the class in one run, then export")
    named = left_out.pop().split()
    uncounted = tuple(p for p in assignment.PART_NAMES if p in named)
    return ClassScores(maxima.pop(), assignment.PART_NAMES, tuple(sorted(students, key=lambda s: s.id)), str(path),
                       uncounted)


def scores_from_gradebook(db_url: str, course_id: str, assignment_name: str) -> ClassScores:
    """Every submission of ``assignment_name`` in an nbgrader gradebook, its total computed as
    ``nbgrader export`` computes it.

    Followed (nbgrader 0.9): ``CsvExportPlugin.export`` in ``nbgrader/plugins/export.py`` writes
    ``score = max(0.0, submission.score - submission.late_submission_penalty)``;
    ``SubmittedAssignment.late_submission_penalty`` (``nbgrader/api.py``) is the sum over the
    submission's notebooks of the penalty that ``AssignLatePenalties``
    (``nbgrader/preprocessors/latesubmissions.py``) stored on each, from the course's
    ``LateSubmissionPlugin`` and capped at that notebook's score; ``Grade.score`` is the manual score
    when a person gave one, else the auto score. Unlike ``nbgrader export``, a student with no
    submission is not written (their LMS cell stays as it is), and a submission still waiting for
    manual grading has no score rather than the 0 it would show."""
    from nbgrader.api import Gradebook, MissingEntry

    if db_url.startswith("sqlite:///") and not Path(db_url[len("sqlite:///"):]).is_file():
        raise ExportError(f"no gradebook at {db_url}")  # opening one would create an empty gradebook
    students: list[StudentScore] = []
    found: set[str] = set()
    worth: dict[str, float] = {}  # part -> its grade cell's points (0: the release leaves it out of the total)
    with Gradebook(db_url, course_id) as gb:
        try:
            max_score = float(gb.find_assignment(assignment_name).max_score)
        except MissingEntry:
            raise ExportError(f"the gradebook {db_url} has no assignment {assignment_name!r}") from None
        for submission in gb.assignment_submissions(assignment_name):
            parts: dict[str, float | None] = {}
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    part = _part_name(grade.name)
                    found.add(part)
                    worth[part] = float(grade.max_score)
                    scored = grade.manual_score is not None or grade.auto_score is not None
                    parts[part] = float(grade.score) if scored else None
            penalty = float(submission.late_submission_penalty or 0.0)
            if submission.needs_manual_grade:
                students.append(StudentScore(submission.student_id, None, parts, penalty,
                                             pending="waiting for manual grading"))
            else:
                students.append(StudentScore(submission.student_id, max(0.0, float(submission.score) - penalty),
                                             parts, penalty))
    order = {p: i for i, p in enumerate(assignment.PART_NAMES)}
    ordered = tuple(sorted(found, key=lambda p: (order.get(p, len(order)), p)))
    return ClassScores(max_score, ordered, tuple(sorted(students, key=lambda s: s.id)),
                       f"the gradebook {db_url}, assignment {assignment_name!r}",
                       tuple(p for p in ordered if worth.get(p) == 0))


def _part_name(grade_cell: str) -> str:
    prefix = assignment.GRADE_CELL_PREFIX
    return grade_cell[len(prefix):] if grade_cell.startswith(prefix) else grade_cell


# --------------------------------------------------------------------------
# the roster


CANVAS_IDENTIFIERS = ("canvas_id", "sis_user_id", "sis_login_id")  # how Canvas finds a student, in its order
CANVAS_COLUMNS = ("name", *CANVAS_IDENTIFIERS, "section")
MOODLE_IDENTIFIERS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}  # Moodle's labels
ROSTER_COLUMNS = ("id", *CANVAS_COLUMNS, *MOODLE_IDENTIFIERS)


@dataclass(frozen=True)
class Roster:
    """Our id (the submission id of grades.csv, or the nbgrader student id) -> that student's LMS
    fields (roster column -> value; an absent column reads as "")."""

    columns: tuple[str, ...]
    people: dict[str, dict[str, str]]
    source: str


def read_roster(path: Path) -> Roster:
    """A roster CSV: a header row with ``id`` and any of ``name, canvas_id, sis_user_id, sis_login_id,
    section`` (Canvas) and ``email, username, idnumber`` (Moodle), in any order and case. An unknown
    column is refused (a misspelt one would silently leave students unmatched), and so is an id
    given twice (which row would be right?)."""
    path = Path(path)
    reader = csv.reader(io.StringIO(_read(path, "roster")))
    header = [h.strip().lower() for h in next(reader, [])]
    _check_header(path, header, required=("id",), known=ROSTER_COLUMNS,
                  what=f"a roster's columns are {', '.join(ROSTER_COLUMNS)}")
    people: dict[str, dict[str, str]] = {}
    lines: dict[str, list[int]] = {}
    for line, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        row = {k: v.strip() for k, v in _row(path, line, header, cells).items()}
        if not row["id"]:
            raise ExportError(f"{path}, line {line}: empty id")
        lines.setdefault(row["id"], []).append(line)
        people[row["id"]] = row
    twice = {i: ls for i, ls in lines.items() if len(ls) > 1}
    if twice:
        raise ExportError(f"{path}: id(s) given more than once: "
                          + "; ".join(f"{i} (lines {', '.join(map(str, ls))})" for i, ls in sorted(twice.items())))
    return Roster(tuple(header), people, str(path))


Row = tuple[StudentScore, dict[str, str]]


def pair(scores: ClassScores, roster: Roster, *, skip_unmapped: bool = False) -> tuple[list[Row], list[str]]:
    """Each student's scores with their roster row, and warnings. An id the roster lacks is an error
    (a grade must not vanish unnoticed) that lists them all; with ``skip_unmapped`` it is left out,
    with a warning that lists them."""
    unmapped = [s.id for s in scores.students if s.id not in roster.people]
    if unmapped and not skip_unmapped:
        raise ExportError(f"{len(unmapped)} id(s) of {scores.source} have no row in the roster {roster.source}: "
                          f"{', '.join(unmapped)} (add them, or give --skip-unmapped to leave them out)")
    warnings = [f"left out, not in the roster {roster.source}: {', '.join(unmapped)}"] if unmapped else []
    return [(s, roster.people[s.id]) for s in scores.students if s.id in roster.people], warnings


# --------------------------------------------------------------------------
# the files


@dataclass(frozen=True)
class Export:
    """One LMS's CSV text and what the instructor should know before importing it."""

    lms: str
    text: str
    warnings: tuple[str, ...]
    rows: int
    out_of: float  # the total's maximum in this file (Moodle's is rescaled, to 100 by default)


# Canvas drops a column whose title contains one of these (its read-only columns; the importer's
# NON_ASSIGNMENT_COLUMN_HEADERS) or takes one titled as a student column for one
CANVAS_NOT_ASSIGNMENTS = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points",
                          "Final Grade", "Override Score", "Override Grade", "Override Status")
CANVAS_RESERVED = ("Student", "LastName", "FirstName", "ID", "SIS User ID", "SIS Login ID", "Section",
                   "Integration ID", "Root Account")


def canvas_csv(rows: Sequence[Row], scores: ClassScores, name: str) -> Export:
    """Canvas's gradebook import: ``Student, ID, SIS User ID, SIS Login ID, Section``, then one column
    titled ``name`` (``Name (123)`` to update Canvas assignment 123), a ``Points Possible`` row with the
    maximum, and per student the total after any late penalty; an empty cell where there is no score.
    Needs a roster column ``canvas_id``, ``sis_user_id`` or ``sis_login_id``, and a value in one of them
    on every exported row: without, Canvas would match students by name."""
    _check_name(name)
    clash = [n for n in CANVAS_NOT_ASSIGNMENTS if n in name] + [n for n in CANVAS_RESERVED if n == name.strip()]
    if clash:
        raise ExportError(f"--name {name!r}: Canvas would not read it as an assignment column "
                          f"(it treats titles with {clash[0]!r} as its own); choose another name")
    columns = [c for c in CANVAS_IDENTIFIERS if c in _columns(rows)]
    if not columns:
        raise ExportError(f"--canvas needs a roster column {', '.join(CANVAS_IDENTIFIERS[:-1])} or "
                          f"{CANVAS_IDENTIFIERS[-1]} (how Canvas finds each student)")
    nobody = [s.id for s, who in rows if not any(who.get(c) for c in CANVAS_IDENTIFIERS)]
    if nobody:
        raise ExportError(f"--canvas: no {', '.join(CANVAS_IDENTIFIERS)} in the roster for {', '.join(nobody)}")
    not_numbers = [s.id for s, who in rows if who.get("canvas_id") and not who["canvas_id"].isdigit()]
    if not_numbers:
        raise ExportError(f"--canvas: canvas_id is Canvas's numeric user id; not a number for {', '.join(not_numbers)}")
    for column in CANVAS_IDENTIFIERS:
        _check_distinct(rows, column)
    warnings = _pending(rows, "an empty cell (no score)") + _neutralised(rows, CANVAS_IDENTIFIERS, "Canvas")
    out = _table([["Student", "ID", "SIS User ID", "SIS Login ID", "Section", spreadsheet_safe(name)],
                  ["Points Possible", "", "", "", "", score_text(scores.max_score)]]
                 + [[spreadsheet_safe(who.get(c, "")) for c in CANVAS_COLUMNS]
                    + ["" if s.total is None else score_text(s.total)] for s, who in rows])
    return Export("Canvas", out, tuple(warnings), len(rows), scores.max_score)


MOODLE_SITE_MAXIMUM = 100.0  # gradepointmax: Moodle refuses an imported grade above it unless unlimitedgrades
MOODLE_OUT_OF = MOODLE_SITE_MAXIMUM  # the total's default scale: also a new Moodle grade item's maximum grade


def moodle_csv(rows: Sequence[Row], scores: ClassScores, name: str, *, identifier: str | None = None,
               per_part: bool = False, out_of: float | None = MOODLE_OUT_OF) -> Export:
    """Moodle's "Import grades from CSV": the user's ``identifier`` column (``email``, ``username`` or
    ``idnumber``; by default the first of these the roster has) under Moodle's own label, then the
    total after any late penalty in a column ``name``, rescaled to be out of ``out_of`` (by default 100:
    what a default Moodle site accepts, and a new grade item's maximum; None: the points as they are),
    and with ``per_part`` one column ``name: part`` per part that counts, in points (before the penalty, which
    nbgrader gives per notebook, not per part); ``-`` where there is no score. A part the total leaves out
    (a self-check quiz) gets no column: a Moodle grade item adds into the course total, and the warning
    says so."""
    _check_name(name)
    present = [c for c in MOODLE_IDENTIFIERS if c in _columns(rows)]
    if identifier is None:
        if not present:
            raise ExportError(f"--moodle needs a roster column {', '.join(MOODLE_IDENTIFIERS)} "
                              "(how Moodle finds each user)")
        identifier = present[0]
    if identifier not in MOODLE_IDENTIFIERS:
        raise ExportError(f"--moodle-id {identifier!r}: one of {', '.join(MOODLE_IDENTIFIERS)}")
    if identifier not in present:
        raise ExportError(f"--moodle: the roster has no column {identifier!r}")
    nobody = [s.id for s, who in rows if not who.get(identifier)]
    if nobody:
        raise ExportError(f"--moodle: no {identifier} in the roster for {', '.join(nobody)}")
    _check_distinct(rows, identifier)
    if out_of is not None and not (out_of > 0 and math.isfinite(out_of)):
        raise ExportError(f"--moodle-out-of {out_of:g}: a positive number")
    scale = (out_of / scores.max_score) if out_of is not None and scores.max_score > 0 else 1.0
    top = scores.max_score * scale
    warnings = _pending(rows, "'-' (no grade)") + _neutralised(rows, (identifier,), "Moodle")
    if top > MOODLE_SITE_MAXIMUM:
        warnings.append(f"Moodle: {name} is out of {score_text(top)}: Moodle refuses the whole import when a grade "
                        f"is above {MOODLE_SITE_MAXIMUM:g}, unless the site allows unlimited grades (Site "
                        "administration > Grades > General settings); without --moodle-points (or with "
                        "--moodle-out-of 100) the total is out of 100")
    elif scale != 1.0:
        warnings.append(f"Moodle: {name} is out of {score_text(top)}, rescaled from the assignment's "
                        f"{score_text(scores.max_score)} points" + ("; the part columns are in points" if per_part
                                                                    else "")
                        + f": give its grade item a maximum grade of {score_text(top)} (or write points with "
                        "--moodle-points)")
    if per_part and any(s.late_penalty for s, _ in rows):
        warnings.append("Moodle: the part columns are before the late penalty (nbgrader gives it per notebook); "
                        f"only {name} includes it")
    parts = scores.counted_parts if per_part else ()
    if per_part and scores.uncounted:
        warnings.append(f"Moodle: {' and '.join(scores.uncounted)} {'is' if len(scores.uncounted) == 1 else 'are'} "
                        "not counted in the total (a self-check, reported apart): no per-part column, since Moodle "
                        "adds every grade item into the course total")
    header = [MOODLE_IDENTIFIERS[identifier], spreadsheet_safe(name), *(spreadsheet_safe(f"{name}: {p}") for p in parts)]
    body = [[spreadsheet_safe(who[identifier]), _moodle_score(s.total, scale),
             *(_moodle_score(s.parts.get(p), 1.0) for p in parts)] for s, who in rows]
    return Export("Moodle", _table([header, *body]), tuple(warnings), len(rows),
                  out_of if out_of is not None and scores.max_score > 0 else scores.max_score)


def _moodle_score(value: float | None, scale: float) -> str:
    return "-" if value is None else score_text(value * scale)


def score_text(value: float) -> str:
    """A score as both importers read it: a point for decimals, at most two of them (Canvas shows
    two), no trailing zeros: ``104``, ``93.33``, ``0``."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def exports(scores: ClassScores, roster: Roster, *, canvas: bool, moodle: bool, name: str,
            per_part: bool = False, moodle_id: str | None = None, moodle_out_of: float | None = MOODLE_OUT_OF,
            skip_unmapped: bool = False) -> tuple[list[Export], list[str]]:
    """The files asked for (Canvas first), and the warnings about the class as a whole."""
    rows, warnings = pair(scores, roster, skip_unmapped=skip_unmapped)
    if not rows:
        raise ExportError(f"nobody to export: no id of {scores.source} is in the roster {roster.source}")
    made = [canvas_csv(rows, scores, name)] if canvas else []
    if moodle:
        made.append(moodle_csv(rows, scores, name, identifier=moodle_id, per_part=per_part, out_of=moodle_out_of))
    return made, warnings


# --------------------------------------------------------------------------
# helpers


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # a spreadsheet's UTF-8 starts with a byte-order mark
    except FileNotFoundError:
        raise ExportError(f"{path}: no such {what} file") from None
    except IsADirectoryError:
        raise ExportError(f"{path}: a folder, not a {what} file") from None
    except UnicodeDecodeError:
        raise ExportError(f"{path}: not UTF-8 text (save the {what} as CSV UTF-8)") from None
    except OSError as exc:
        raise ExportError(f"{path}: cannot read it ({exc.strerror or exc})") from None


def _check_header(path: Path, header: list[str], *, required: Sequence[str], known: Sequence[str], what: str) -> None:
    if not any(header):
        raise ExportError(f"{path}: empty (no header row)")
    unknown = [h for h in header if h not in known]
    if unknown:
        raise ExportError(f"{path}: unknown column(s) {', '.join(repr(u) for u in unknown)}; {what}")
    twice = sorted({h for h in header if header.count(h) > 1})
    if twice:
        raise ExportError(f"{path}: column(s) {', '.join(twice)} given more than once")
    missing = [c for c in required if c not in header]
    if missing:
        raise ExportError(f"{path}: no column {', '.join(missing)}; {what}")


def _row(path: Path, line: int, header: list[str], cells: list[str]) -> dict[str, str]:
    if len(cells) > len(header):
        raise ExportError(f"{path}, line {line}: {len(cells)} cells for {len(header)} columns")
    return dict(zip(header, cells + [""] * (len(header) - len(cells))))


@overload
def _number(path: Path, line: int, column: str, text: str, *, empty_ok: Literal[False] = False) -> float: ...
@overload
def _number(path: Path, line: int, column: str, text: str, *, empty_ok: bool) -> float | None: ...
def _number(path: Path, line: int, column: str, text: str, *, empty_ok: bool = False) -> float | None:
    text = text.strip()
    if not text and empty_ok:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ExportError(f"{path}, line {line}: {column} {text!r} is not a score")
    return value


def _unneutralised(text: str) -> str:
    """An id as grades.csv's writer received it: it prefixes an apostrophe to a cell a spreadsheet
    would read as a formula (``text.spreadsheet_safe``)."""
    text = text.strip()
    return text[1:] if text.startswith("'") and text[1:].startswith(FORMULA_STARTS) else text


def _check_unique(path: Path, ids: list[str], what: str) -> None:
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ExportError(f"{path}: {what}(s) given more than once: {', '.join(twice)}")


def _check_distinct(rows: Sequence[Row], column: str) -> None:
    """Two of our students with one LMS identity would overwrite each other's grade."""
    owners: dict[str, list[str]] = {}
    for s, who in rows:
        if who.get(column):
            owners.setdefault(who[column], []).append(s.id)
    shared = {v: ids for v, ids in owners.items() if len(ids) > 1}
    if shared:
        raise ExportError(f"roster: {column} shared by more than one student: "
                          + "; ".join(f"{v!r} ({', '.join(ids)})" for v, ids in sorted(shared.items())))


def _check_name(name: str) -> None:
    if not name.strip():
        raise ExportError("--name: empty (the LMS's assignment or grade item name)")


def _columns(rows: Sequence[Row]) -> set[str]:
    return {c for _, who in rows for c in who}


def _pending(rows: Sequence[Row], written_as: str) -> list[str]:
    waiting = [f"{s.id} ({s.pending})" for s, _ in rows if s.total is None]
    if not waiting:
        return []
    return [f"no score yet for {', '.join(waiting)}: written as {written_as}; importing it may clear a score the "
            "LMS already holds for them"]


def _neutralised(rows: Sequence[Row], columns: Sequence[str], lms: str) -> list[str]:
    changed = [f"{s.id} ({c})" for s, who in rows for c in columns if who.get(c, "").startswith(FORMULA_STARTS)]
    if not changed:
        return []
    return [f"{lms}: roster values a spreadsheet would read as a formula were written with a leading "
            f"apostrophe, so the LMS will not match them as they are: {', '.join(changed)}"]


def _table(rows: list[list[str]]) -> str:
    """RFC 4180 CSV (Canvas's import page asks for it): CRLF line ends, so that a cell holding a CR or
    an LF is quoted too."""
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\r\n").writerows(rows)
    return buffer.getvalue()
