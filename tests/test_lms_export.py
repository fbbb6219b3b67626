"""`python -m autograder export`: the CSV files Canvas's and Moodle's gradebooks import
(autograder/reports/lms.py).

Unit tests write a small class's grades.csv with the grader's own writer, or a small nbgrader
gradebook through nbgrader's API with late penalties assigned by nbgrader's own
``AssignLatePenalties``, and check the exact CSV text of both formats, that the totals are
``nbgrader export``'s, that text cells a spreadsheet would run as a formula are neutralised, and
that bad input says what is wrong (exit status 2). The integration test runs a real nbgrader
course (tools/course.py) with one late submission, grades it, and exports both files.
"""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder import assignment
from autograder.cli import main as cli_main
from autograder.model.results import CheckResult, GradedSubmission
from autograder.reports import lms
from autograder.reports.table import grades_csv

pytestmark = pytest.mark.slow  # nbgrader's gradebook, and a real nbgrader course through `python -m autograder export`

PARTS = assignment.PART_NAMES
N = len(PARTS)
POINTS = 10  # every part out of 10 in the small class below
MAX = POINTS * N


def graded(sid: str, wrong: dict[str, bool] | None = None, error: str = "") -> GradedSubmission:
    """One check per part, out of POINTS; ``wrong``: the parts it failed."""
    wrong = wrong or {}
    checks = [CheckResult(p, "all", POINTS, passed=not wrong.get(p)) for p in PARTS]
    return GradedSubmission(sid, checks, error=error)


def small_class(folder: Path) -> Path:
    """grades.csv of four submissions, written as the grader writes it: full marks, one part wrong,
    one we could not grade, and one whose id a spreadsheet would read as a formula."""
    subs = [graded("ada"), graded("ben", {PARTS[0]: True}), graded("cy", error="the worker died"),
            graded("-dee", {PARTS[-1]: True})]
    path = folder / "grades.csv"
    path.write_text(grades_csv(subs), encoding="utf-8")
    return path


def roster(folder: Path, rows: list[dict[str, str]], name: str = "roster.csv") -> Path:
    path = folder / name
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


ROSTER = [
    {"id": "ada", "name": "Lovelace, Ada", "canvas_id": "101", "sis_user_id": "S1", "sis_login_id": "ada@uni.example",
     "section": "A", "email": "ada@uni.example", "username": "ada", "idnumber": "0001"},
    {"id": "ben", "name": "Ben Bitdiddle", "canvas_id": "102", "sis_user_id": "S2", "sis_login_id": "ben@uni.example",
     "section": "A", "email": "ben@uni.example", "username": "ben", "idnumber": "0002"},
    {"id": "cy", "name": "Cy D. Fect", "canvas_id": "103", "sis_user_id": "S3", "sis_login_id": "cy@uni.example",
     "section": "B", "email": "cy@uni.example", "username": "cy", "idnumber": "0003"},
    {"id": "-dee", "name": "=HYPERLINK(\"http://evil\",\"Dee\")", "canvas_id": "104", "sis_user_id": "S4",
     "sis_login_id": "dee@uni.example", "section": "+B", "email": "dee@uni.example", "username": "dee",
     "idnumber": "0004"},
    {"id": "eve", "name": "Eve (did not submit)", "canvas_id": "105", "sis_user_id": "S5",
     "sis_login_id": "eve@uni.example", "section": "B", "email": "eve@uni.example", "username": "eve",
     "idnumber": "0005"},
]


def unix(text: str) -> str:
    """The files are RFC 4180 CSV (CRLF line ends, below with LF for reading)."""
    assert "\n" not in text.replace("\r\n", ""), text
    return text.replace("\r\n", "\n")


def export(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """The command in-process; (exit status, Canvas file, Moodle file)."""
    canvas, moodle = tmp_path / "canvas.csv", tmp_path / "moodle.csv"
    status = cli_main(["export", "--canvas", str(canvas), "--moodle", str(moodle), *args])
    read = lambda p: unix(p.read_bytes().decode("utf-8")) if p.exists() else ""  # noqa: E731
    return status, read(canvas), read(moodle)


# --------------------------------------------------------------------------
# the two formats, exactly


def test_canvas_and_moodle_from_grades_csv(tmp_path, capsys):
    status, canvas, moodle = export(tmp_path, "--from-grades", str(small_class(tmp_path)),
                                    "--roster", str(roster(tmp_path, ROSTER)))
    assert status == 0, capsys.readouterr().err
    # Canvas: its five student columns, the assignment column, the Points Possible row; the
    # submission we could not grade has an empty cell (no score), never 0; a roster student
    # without a submission (eve) is not in the file; cells that would run as formulas start with '
    assert canvas == (
        "Student,ID,SIS User ID,SIS Login ID,Section,attention\n"
        f"Points Possible,,,,,{MAX}\n"
        f'"\'=HYPERLINK(""http://evil"",""Dee"")",104,S4,dee@uni.example,\'+B,{MAX - POINTS}\n'
        f'"Lovelace, Ada",101,S1,ada@uni.example,A,{MAX}\n'
        f"Ben Bitdiddle,102,S2,ben@uni.example,A,{MAX - POINTS}\n"
        "Cy D. Fect,103,S3,cy@uni.example,B,\n")
    # Moodle: the user's email (the roster's first Moodle identifier) under Moodle's label, then the
    # total out of 100 (a default Moodle site refuses a grade above 100); '-' is Moodle's "no grade"
    assert moodle == ("Email address,attention\n"
                      f"dee@uni.example,{lms.score_text(100 * (MAX - POINTS) / MAX)}\n"
                      "ada@uni.example,100\n"
                      f"ben@uni.example,{lms.score_text(100 * (MAX - POINTS) / MAX)}\n"
                      "cy@uni.example,-\n")
    said = capsys.readouterr()
    err = said.err
    assert "no score yet for cy (grader error): written as an empty cell (no score)" in err
    assert f"Moodle: attention is out of 100, rescaled from the assignment's {MAX} points" in err
    assert f"(4 student(s), out of {MAX})" in said.out.splitlines()[0]  # each file's own maximum
    assert "(4 student(s), out of 100)" in said.out.splitlines()[1]


def test_moodle_points_as_they_are_on_request(tmp_path, capsys):
    status, _, moodle = export(tmp_path, "--from-grades", str(small_class(tmp_path)), "--moodle-points",
                               "--roster", str(roster(tmp_path, ROSTER)))
    assert status == 0, capsys.readouterr().err
    assert moodle.splitlines()[1:3] == [f"dee@uni.example,{MAX - POINTS}", f"ada@uni.example,{MAX}"]
    assert "rescaled" not in capsys.readouterr().err
    with pytest.raises(SystemExit):  # one or the other
        export(tmp_path, "--from-grades", str(small_class(tmp_path)), "--moodle-points", "--moodle-out-of", "50",
               "--roster", str(roster(tmp_path, ROSTER)))
    assert "not allowed with argument" in capsys.readouterr().err


def test_by_default_no_moodle_grade_is_above_100():
    """A default Moodle site refuses a whole import with a grade above 100 (its gradepointmax): here the
    assignment is out of 105, as the real one is."""
    scores = lms.ClassScores(105, (), (lms.StudentScore("x", 105), lms.StudentScore("y", 52.5)), "test")
    paired = [(s, {"id": s.id, "idnumber": str(k)}) for k, s in enumerate(scores.students)]
    made = lms.moodle_csv(paired, scores, "attention")
    assert made.text == "ID number,attention\r\n0,100\r\n1,50\r\n"
    assert not any("above 100" in w for w in made.warnings)
    (made,), _ = lms.exports(scores, lms.Roster(("id", "idnumber"), {s.id: who for s, who in paired}, "r"),
                             canvas=False, moodle=True, name="attention")
    assert made.text == "ID number,attention\r\n0,100\r\n1,50\r\n"


def test_moodle_per_part_by_username_rescaled(tmp_path, capsys):
    small_class(tmp_path)  # --from-grades takes the folder too
    status, _, moodle = export(tmp_path, "--from-grades", str(tmp_path), "--per-part", "--moodle-id", "username",
                               "--moodle-out-of", "100", "--name", "Attention HW",
                               "--roster", str(roster(tmp_path, ROSTER)))
    assert status == 0, capsys.readouterr().err
    rows = list(csv.reader(io.StringIO(moodle)))
    assert rows[0] == ["Username", "Attention HW", *(f"Attention HW: {p}" for p in PARTS)]
    assert rows[2] == ["ada", "100", *["10"] * N]  # only the total is rescaled: the parts are grade items of their own
    assert rows[3] == ["ben", lms.score_text(100 * (MAX - POINTS) / MAX), "0", *["10"] * (N - 1)]
    assert rows[4] == ["cy", "-", *["-"] * N]


def test_score_text():
    assert [lms.score_text(x) for x in (108, 104.0, 93.3333, 0.0, 0.004, 12.5)] == \
        ["108", "104", "93.33", "0", "0", "12.5"]


# --------------------------------------------------------------------------
# late penalties, as nbgrader applies them


def one_point_per_hour_late():
    """nbgrader's documented example of a late-penalty plugin (SubMarks: a point per hour late)."""
    from nbgrader.plugins import LateSubmissionPlugin

    class OnePointPerHourLate(LateSubmissionPlugin):
        def late_submission_penalty(self, student_id, score, total_seconds_late):
            return round(total_seconds_late / 3600)

    return OnePointPerHourLate


DUE = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def small_gradebook(tmp_path: Path) -> str:
    """An nbgrader gradebook: two notebooks, three grade cells; ada on time with full marks, cleo 5 hours
    late (5 points off each notebook, but her quiz notebook scored 3, so 3 there: nbgrader caps a
    notebook's penalty at its score), dan waiting for manual grading, eve enrolled but no submission.
    The penalties are assigned by nbgrader's own AssignLatePenalties, as `nbgrader autograde` does."""
    import nbformat
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import AssignLatePenalties

    url = "sqlite:///" + str(tmp_path / "gradebook.db")
    cells = {("attention", "grade-masks"): 20, ("attention", "grade-heads"): 20, ("quiz", "grade-quiz"): 10}
    work = {"ada": (DUE - timedelta(hours=1), {"grade-masks": 20, "grade-heads": 20, "grade-quiz": 10}),
            "cleo": (DUE + timedelta(hours=5, minutes=10), {"grade-masks": 15, "grade-heads": 20, "grade-quiz": 3}),
            "dan": (DUE, None)}
    with Gradebook(url) as gb:
        gb.add_assignment("attention", duedate=DUE.replace(tzinfo=None))
        for notebook in ("attention", "quiz"):
            gb.add_notebook(notebook, "attention")
        for (notebook, cell), points in cells.items():
            gb.add_grade_cell(cell, notebook, "attention", max_score=points, cell_type="code")
        for student in ("ada", "cleo", "dan", "eve"):
            gb.add_student(student)
        for student, (timestamp, scores) in work.items():
            gb.add_submission("attention", student, timestamp=timestamp)
            for notebook, cell in cells:
                grade = gb.find_grade(cell, notebook, "attention", student)
                grade.auto_score = None if scores is None else scores[cell]
                grade.needs_manual_grade = scores is None
            gb.db.commit()
    late = AssignLatePenalties(plugin_class=one_point_per_hour_late())
    for student in work:
        for notebook in ("attention", "quiz"):
            late.preprocess(nbformat.v4.new_notebook(), {"nbgrader": {
                "notebook": notebook, "assignment": "attention", "student": student, "db_url": url}})
    return url


def nbgrader_export(url: str, to: Path) -> dict[str, dict[str, str]]:
    """nbgrader's own CSV export of the gradebook, by student."""
    from nbgrader.api import Gradebook
    from nbgrader.plugins import CsvExportPlugin

    with Gradebook(url) as gb:
        CsvExportPlugin(to=str(to)).export(gb)
    with to.open(newline="") as fh:
        return {r["student_id"]: r for r in csv.DictReader(fh)}


@pytest.fixture
def tools_on_path(monkeypatch):
    """nbgrader runs `alembic` by name when it creates a gradebook: this Python's bin folder first."""
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))


def test_late_penalty_as_nbgrader_applies_it(tmp_path, tools_on_path):
    url = small_gradebook(tmp_path)
    scores = lms.scores_from_gradebook(url, "default_course", "attention")
    by_id = {s.id: s for s in scores.students}
    assert scores.max_score == 50 and scores.parts == ("masks", "heads", "quiz")
    assert sorted(by_id) == ["ada", "cleo", "dan"]  # eve submitted nothing: not written
    assert by_id["cleo"].late_penalty == 5 + 3 and by_id["cleo"].total == 38 - 8
    assert by_id["cleo"].parts == {"masks": 15, "heads": 20, "quiz": 3}  # the grade cells, before the penalty
    assert by_id["ada"].total == 50 and by_id["ada"].late_penalty == 0
    assert by_id["dan"].total is None and "manual grading" in by_id["dan"].pending
    theirs = nbgrader_export(url, tmp_path / "nbgrader-export.csv")
    for sid in ("ada", "cleo"):
        assert by_id[sid].total == float(theirs[sid]["score"]), sid
        assert by_id[sid].late_penalty == float(theirs[sid]["late_submission_penalty"]), sid

    rows = [({"id": s, "sis_login_id": f"{s}@uni.example", "email": f"{s}@uni.example"}) for s in ("ada", "cleo", "dan")]
    paired, _ = lms.pair(scores, lms.Roster(("id", "sis_login_id", "email"), {r["id"]: r for r in rows}, "roster"))
    assert unix(lms.canvas_csv(paired, scores, "HW 1 (77)").text) == (
        "Student,ID,SIS User ID,SIS Login ID,Section,HW 1 (77)\n"
        "Points Possible,,,,,50\n"
        ",,,ada@uni.example,,50\n"
        ",,,cleo@uni.example,,30\n"
        ",,,dan@uni.example,,\n")
    assert unix(lms.moodle_csv(paired, scores, "HW 1").text).splitlines()[1:3] == [  # by default out of 100
        "ada@uni.example,100", "cleo@uni.example,60"]
    moodle = lms.moodle_csv(paired, scores, "HW 1", per_part=True, out_of=None)  # points
    assert unix(moodle.text) == ("Email address,HW 1,HW 1: masks,HW 1: heads,HW 1: quiz\n"
                           "ada@uni.example,50,20,20,10\n"
                           "cleo@uni.example,30,15,20,3\n"
                           "dan@uni.example,-,-,-,-\n")
    assert any("before the late penalty" in w for w in moodle.warnings)


# --------------------------------------------------------------------------
# spreadsheet safety


def test_formula_cells_are_neutralised(tmp_path):
    scores = lms.ClassScores(10, (), (lms.StudentScore("x", 7),), "test")
    hostile = {"id": "x", "name": "@SUM(A1)", "canvas_id": "1", "sis_user_id": "=1+1", "sis_login_id": "\tcmd",
               "section": "-2", "email": "+x@uni.example"}
    paired = [(scores.students[0], hostile)]
    canvas = lms.canvas_csv(paired, scores, "=evil()")
    assert canvas.text.split("\r\n") == ["Student,ID,SIS User ID,SIS Login ID,Section,'=evil()",
                                        "Points Possible,,,,,10",
                                        "'@SUM(A1),1,'=1+1,'\tcmd,'-2,7", ""]
    assert any("sis_user_id" in w and "sis_login_id" in w for w in canvas.warnings)
    moodle = lms.moodle_csv(paired, scores, "\rx")
    assert list(csv.reader(io.StringIO(moodle.text, newline=""))) == [["Email address", "'\rx"], ["'+x@uni.example", "70"]]
    assert any("email" in w for w in moodle.warnings)


def test_grades_csv_ids_are_read_back_as_graded(tmp_path):
    """grades.csv's writer neutralises an id like "-dee"; the export matches the roster's "-dee"."""
    scores = lms.scores_from_grades_csv(small_class(tmp_path))
    assert "-dee" in {s.id for s in scores.students}


# --------------------------------------------------------------------------
# unmapped ids


def test_unmapped_ids_are_an_error_listing_them(tmp_path, capsys):
    people = [r for r in ROSTER if r["id"] not in ("ben", "cy")]
    status, canvas, moodle = export(tmp_path, "--from-grades", str(small_class(tmp_path)),
                                    "--roster", str(roster(tmp_path, people)))
    assert status == 2 and not canvas and not moodle
    err = capsys.readouterr().err
    assert "2 id(s)" in err and "ben, cy" in err and "--skip-unmapped" in err


def test_skip_unmapped_leaves_them_out_with_a_warning(tmp_path, capsys):
    people = [r for r in ROSTER if r["id"] != "ben"]
    status, canvas, moodle = export(tmp_path, "--from-grades", str(small_class(tmp_path)), "--skip-unmapped",
                                    "--roster", str(roster(tmp_path, people)))
    assert status == 0
    assert "warning: left out, not in the roster" in capsys.readouterr().err
    assert "Bitdiddle" not in canvas and "ben@" not in moodle and "ada@uni.example" in moodle


# --------------------------------------------------------------------------
# bad input


@pytest.mark.parametrize("args, message", [
    (["--from-grades", "{tmp}/nowhere.csv", "--roster", "{roster}"], "no such grades.csv file"),
    (["--from-grades", "{grades}", "--roster", "{tmp}/nowhere.csv"], "no such roster file"),
    (["--roster", "{roster}"], "give one of --from-grades"),
    (["--from-grades", "{grades}", "--nbgrader", "attention", "--roster", "{roster}"], "give one of --from-grades"),
    (["--from-grades", "{grades}", "--roster", "{roster}", "--moodle", "{roster}"], "must be different files"),
])
def test_usage_errors_exit_2(tmp_path, capsys, args, message):
    grades, people = small_class(tmp_path), roster(tmp_path, ROSTER)
    args = [a.format(tmp=tmp_path, grades=grades, roster=people) for a in args]
    status, canvas, moodle = export(tmp_path, *args)
    assert status == 2 and not canvas and not moodle
    assert message in capsys.readouterr().err


def test_an_lms_file_is_needed_and_per_part_is_moodles(tmp_path, capsys):
    grades, people = small_class(tmp_path), roster(tmp_path, ROSTER)
    assert cli_main(["export", "--from-grades", str(grades), "--roster", str(people)]) == 2
    assert "--canvas FILE, --moodle FILE or both" in capsys.readouterr().err
    assert cli_main(["export", "--from-grades", str(grades), "--roster", str(people), "--per-part",
                     "--canvas", str(tmp_path / "c.csv")]) == 2
    assert "--per-part is for --moodle" in capsys.readouterr().err


@pytest.mark.parametrize("text, message", [
    ("id,name,sis_loginid\nada,Ada,ada@x\n", "unknown column(s) 'sis_loginid'"),
    ("name,email\nAda,ada@x\n", "no column id"),
    ("id,email\nada,a@x\nben,b@x\nada,a2@x\n", "ada (lines 2, 4)"),
    ("id,email,email\nada,a@x,a@x\n", "given more than once"),
    ("id,email\nada,a@x,extra\n", "line 2: 3 cells for 2 columns"),
    ("id,email\n,a@x\n", "line 2: empty id"),
    ("", "empty (no header row)"),
])
def test_bad_rosters(tmp_path, text, message):
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(lms.ExportError) as caught:
        lms.read_roster(path)
    assert message in str(caught.value)


def test_roster_header_is_case_insensitive_and_a_bom_is_fine(tmp_path):
    path = tmp_path / "roster.csv"
    path.write_text("\ufeffID, Email \nada,ada@x\n", encoding="utf-8")
    assert lms.read_roster(path).people == {"ada": {"id": "ada", "email": "ada@x"}}


def test_bad_grades_csv(tmp_path):
    good = small_class(tmp_path).read_text(encoding="utf-8")
    cases = {
        good.replace("status", "state", 1): "unknown column(s) 'state'",
        "submission,total\nada,3\n": "no column max, status",
        good.replace(f"ada,{POINTS}", "ada,lots", 1): "is not a score",
        good + good.splitlines()[1] + "\n": "given more than once: ",
    }
    for text, message in cases.items():
        path = tmp_path / "bad.csv"
        path.write_text(text, encoding="utf-8")
        with pytest.raises(lms.ExportError) as caught:
            lms.scores_from_grades_csv(path)
        assert message in str(caught.value), (text, str(caught.value))


def test_grades_csv_of_a_partial_run_is_refused(tmp_path):
    """A run with --parts leaves the other parts empty: its totals are not the assignment's."""
    path = tmp_path / "grades.csv"
    partial = GradedSubmission("ada", [CheckResult(PARTS[0], "all", POINTS)])
    path.write_text(grades_csv([partial]), encoding="utf-8")
    with pytest.raises(lms.ExportError, match="did not grade every part"):
        lms.scores_from_grades_csv(path)


def test_lms_identities_are_required_and_distinct(tmp_path):
    scores = lms.scores_from_grades_csv(small_class(tmp_path))
    only_names = lms.Roster(("id", "name"), {r["id"]: {"id": r["id"], "name": r["name"]} for r in ROSTER}, "r")
    paired, _ = lms.pair(scores, only_names)
    with pytest.raises(lms.ExportError, match="--canvas needs a roster column canvas_id, sis_user_id or sis_login_id"):
        lms.canvas_csv(paired, scores, "attention")
    with pytest.raises(lms.ExportError, match="--moodle needs a roster column email, username, idnumber"):
        lms.moodle_csv(paired, scores, "attention")
    shared = {r["id"]: {**r, "email": "same@uni.example"} for r in ROSTER}
    paired, _ = lms.pair(scores, lms.Roster(tuple(ROSTER[0]), shared, "r"))
    with pytest.raises(lms.ExportError, match="email shared by more than one student"):
        lms.moodle_csv(paired, scores, "attention")
    bad_id = {r["id"]: {**r, "canvas_id": "u101"} for r in ROSTER}
    paired, _ = lms.pair(scores, lms.Roster(tuple(ROSTER[0]), bad_id, "r"))
    with pytest.raises(lms.ExportError, match="numeric user id"):
        lms.canvas_csv(paired, scores, "attention")
    paired, _ = lms.pair(scores, lms.Roster(tuple(ROSTER[0]), {r["id"]: r for r in ROSTER}, "r"))
    with pytest.raises(lms.ExportError, match="Canvas would not read it"):
        lms.canvas_csv(paired, scores, "Final Grade")


def test_moodle_points_over_100_warn():
    scores = lms.ClassScores(108, (), (lms.StudentScore("x", 108),), "test")
    made = lms.moodle_csv([(scores.students[0], {"id": "x", "idnumber": "7"})], scores, "attention", out_of=None)
    assert made.text == "ID number,attention\r\n7,108\r\n"
    assert any("above 100" in w and "without --moodle-points" in w for w in made.warnings)


def test_export_from_a_folder_that_is_no_course(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    status, _, _ = export(tmp_path, "--nbgrader", "attention", "--roster", str(roster(tmp_path, ROSTER)))
    assert status == 2 and "no nbgrader_config.py" in capsys.readouterr().err


# --------------------------------------------------------------------------
# a real nbgrader course, one submission late


LATE_PLUGIN = '''
# Added by tests/test_lms_export.py: nbgrader's documented late-penalty example, a point per hour late
from nbgrader.plugins import LateSubmissionPlugin


class OnePointPerHourLate(LateSubmissionPlugin):
    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return round(total_seconds_late / 3600)


c.AssignLatePenalties.plugin_class = OnePointPerHourLate
'''


def like_the_example(example: str, made: str, same_points: bool) -> None:
    """A file the export made against the docs' example of it: the same rows, columns and text; with
    `same_points` (the assignment is out of the example's points) byte for byte. A part's points are the
    graders', which an instructor may change: the example then still shows the file's shape."""
    shown, got = list(csv.reader(io.StringIO(example))), list(csv.reader(io.StringIO(made)))
    assert [len(r) for r in shown] == [len(r) for r in got] and shown[0] == got[0], (example, made)
    if same_points:
        assert example == made  # as written there (Moodle's total out of 100 by default: 100, 95.24, 100)
        return
    number = re.compile(r"^\d+(\.\d+)?$")
    for a, b in zip(sum(shown, []), sum(got, [])):
        assert a == b or (number.match(a) and number.match(b)), (a, b)


def test_a_real_course_with_a_late_submission(tmp_path):
    """Three demo students through nbgrader (generate, release, fetch, submit, collect), a due date,
    cleo's submission 2 h 10 min after it (a point off each of her two notebooks per hour), our grader
    writing the gradebook, then both files from the gradebook: their totals are `nbgrader export`'s."""
    from tools import course as C
    from tools import demo

    by_name = {s.name: s.student for s in demo.roster()}
    course = C.set_up_class(tmp_path / "course", [by_name[n] for n in ("ada", "cleo", "hana")], course_id="lms")
    due = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    course.nbgrader("db", "assignment", "add", C.ASSIGNMENT, f"--duedate={due:%Y-%m-%d %H:%M:%S} UTC")
    late = course.root / "submitted" / "cleo" / C.ASSIGNMENT / "timestamp.txt"
    late.write_text(f"{due + timedelta(hours=2, minutes=10):%Y-%m-%d %H:%M:%S.%f} UTC")
    with (course.root / "nbgrader_config.py").open("a", encoding="utf-8") as fh:
        fh.write(LATE_PLUGIN)
    proc = C.grade_course(course, tmp_path / "reports", "--secret", "lms")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    people = roster(tmp_path, [  # the example of docs/lms.md
        {"id": "ada", "name": "Lovelace, Ada", "canvas_id": "1001", "sis_user_id": "S2024001", "section": "A"},
        {"id": "cleo", "name": "Cleo Patel", "canvas_id": "1003", "sis_user_id": "S2024003", "section": "A"},
        {"id": "hana", "name": "Hana Sato", "canvas_id": "1008", "sis_user_id": "S2024008", "section": "B"}])
    with people.open() as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row.update(sis_login_id=f"{row['id']}@uni.example", email=f"{row['id']}@uni.example")
    people = roster(tmp_path, rows)
    canvas, moodle = tmp_path / "canvas.csv", tmp_path / "moodle.csv"
    proc = subprocess.run([sys.executable, "-m", "autograder", "export", "--nbgrader", C.ASSIGNMENT, "--roster",
                           str(people), "--canvas", str(canvas), "--moodle", str(moodle), "--per-part"],
                          cwd=course.root, env=course.env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    print(canvas.read_text(), moodle.read_text(), sep="\n")  # shown with -s
    page = (Path(__file__).resolve().parents[1] / "docs" / "lms.md").read_text(encoding="utf-8")
    section = page[page.index("\n## Example\n"):]
    examples = re.findall(r"^```csv\n(.*?)^```", section, flags=re.S | re.M)[:2]
    theirs = {r["student_id"]: r for r in C.export_grades(course)}
    shown_out_of = float(next(r for r in csv.reader(io.StringIO(examples[0])) if r[0] == "Points Possible")[-1])
    for example, made in zip(examples, (canvas, moodle)):
        like_the_example(example, unix(made.read_bytes().decode()), shown_out_of == float(theirs["ada"]["max_score"]))

    # 2 points off each notebook, never more than it scored: the self-check quiz's notebook has nothing to lose
    assert float(theirs["cleo"]["late_submission_penalty"]) == 2.0
    assert float(theirs["ada"]["late_submission_penalty"]) == 0.0
    canvas_rows = list(csv.reader(io.StringIO(canvas.read_text())))
    assert canvas_rows[:2] == [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", C.ASSIGNMENT],
                               ["Points Possible", "", "", "", "", lms.score_text(float(theirs["ada"]["max_score"]))]]
    totals = {r[3].split("@")[0]: r[5] for r in canvas_rows[2:]}
    assert totals == {s: lms.score_text(float(theirs[s]["score"])) for s in ("ada", "cleo", "hana")}
    assert float(theirs["cleo"]["score"]) == float(theirs["cleo"]["raw_score"]) - 2

    parts = C.gradebook_part_scores(course.root / "gradebook.db")
    moodle_rows = list(csv.DictReader(io.StringIO(moodle.read_text())))
    out_of = float(theirs["ada"]["max_score"])
    for row in moodle_rows:  # Moodle's total out of 100, by default; its parts in points
        student = row["Email address"].split("@")[0]
        assert row[C.ASSIGNMENT] == lms.score_text(100 * float(theirs[student]["score"]) / out_of)
        assert f"{C.ASSIGNMENT}: quiz" not in row  # the self-check quiz counts nowhere: no column of its own
        assert {p: row[f"{C.ASSIGNMENT}: {p}"] for p in parts[student] if p != "quiz"} == \
            {p: lms.score_text(v) for p, v in parts[student].items() if p != "quiz"}
