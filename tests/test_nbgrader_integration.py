"""``python -m autograder grade --nbgrader attention`` in a real nbgrader course.

A temporary course goes through nbgrader's whole workflow (generate_assignment,
release_assignment, fetch_assignment and submit for several students,
collect); then our grader grades it and writes the gradebook, and, on a copy
of the same course, ``nbgrader autograde`` grades it the nbgrader way
(every notebook executed, ``grade_part`` in each grade cell). For these
non-adversarial submissions both must give every grade cell the same score,
in the gradebook and in ``nbgrader export``.

Also: the demo's class (``make demo``) scores as its students' work should.

Everything runs in temporary folders with their own Jupyter configuration.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder import assignment
from autograder.cli import main as cli_main
from autograder.graders.points import grader_points
from autograder.isolation.policy import inside, sandbox_view
from autograder.nbgrader import gradebook as G
from autograder import versions
from autograder.nbgrader.course import open_course
from tools import course as C
from tools import demo

pytestmark = pytest.mark.slow

ASSIGNMENT = C.ASSIGNMENT
# Non-adversarial students (nbgrader autograde runs student code in the kernel
# that grades it: hostile ones are for our grader only, see the demo test).
STUDENTS = ("ada", "ben", "cleo", "eli", "hana")
SECRET = "integration"
PART_POINTS = grader_points()  # each part's, set by its grader's checks
# the release's grade cells: the self-check quiz is reported, not counted, so its cell is worth nothing
GRADEBOOK_POINTS = {**PART_POINTS, "quiz": 0}


def demo_students(names) -> list:
    by_name = {s.name: s for s in demo.roster()}
    return [by_name[n] for n in names]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("nbgrader-integration")


@pytest.fixture(scope="module")
def course(work) -> C.Course:
    """The course after collect; a copy of it is taken for nbgrader autograde."""
    course = C.set_up_class(work / "ours", [s.student for s in demo_students(STUDENTS)], course_id="integration")
    return course


@pytest.fixture(scope="module")
def autograded(course, work) -> C.Course:
    """A copy of the collected course, graded by ``nbgrader autograde``."""
    copy = C.Course.open(work / "theirs", course.course_id)
    shutil.copytree(course.work, copy.work, symlinks=True)
    # the copy's nbgrader_config.py finds its own root; only the kernel path
    # and Jupyter folders must point into the copy
    copy.autograde(env={"AUTOGRADER_SECRET": SECRET})  # the same inputs per student as ours
    return copy


@pytest.fixture(scope="module")
def graded(course, autograded) -> tuple[Path, float]:
    """Our grader, in the course root (after the copy was taken)."""
    out = course.work / "reports"
    start = time.perf_counter()
    proc = C.grade_course(course, out, "--secret", SECRET)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, elapsed


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        return list(csv.DictReader(fh))


# --------------------------------------------------------------------------


def test_every_collected_submission_is_graded(course, graded):
    out, _ = graded
    rows = {r["submission"]: r for r in read_csv(out / "grades.csv")}
    assert sorted(rows) == sorted(STUDENTS)
    for student in STUDENTS:
        assert rows[student]["status"] == "graded", rows[student]
        report = json.loads((out / student / "results.json").read_text())
        assert {t["name"].split("/")[0] for t in report["tests"]} == set(PART_POINTS)
        assert (out / student / "feedback.html").is_file()


def test_gradebook_holds_our_part_scores(course, graded):
    out, _ = graded
    rows = {r["submission"]: r for r in read_csv(out / "grades.csv")}
    in_gradebook = C.gradebook_part_scores(course.root / "gradebook.db")
    assert sorted(in_gradebook) == sorted(STUDENTS)
    for student in STUDENTS:
        assert in_gradebook[student] == {p: min(float(rows[student][p]), GRADEBOOK_POINTS[p]) for p in PART_POINTS}, \
            student


def test_scores_follow_the_students_work(course, graded):
    out, _ = graded
    rows = {r["submission"]: r for r in read_csv(out / "grades.csv")}
    scores = C.gradebook_part_scores(course.root / "gradebook.db")
    assert scores["ada"] == {p: float(v) for p, v in GRADEBOOK_POINTS.items()}
    assert float(rows["ada"]["quiz"]) == PART_POINTS["quiz"]  # reported in full, counted nowhere
    assert set(scores["ben"].values()) == {0.0}
    for student, part in (("cleo", "masks"), ("eli", "heads"), ("hana", "quiz")):
        assert float(rows[student][part]) < PART_POINTS[part]
        assert all(scores[student][p] == GRADEBOOK_POINTS[p] for p in PART_POINTS if p != part)


def test_same_scores_as_nbgrader_autograde(course, graded, autograded):
    ours = C.gradebook_part_scores(course.root / "gradebook.db")
    theirs = C.gradebook_part_scores(autograded.root / "gradebook.db")
    assert ours == theirs
    exported_ours = {r["student_id"]: r for r in C.export_grades(course)}
    exported_theirs = {r["student_id"]: r for r in C.export_grades(autograded)}
    assert sorted(exported_ours) == sorted(STUDENTS)
    for student in STUDENTS:
        for column in ("raw_score", "score", "max_score", "late_submission_penalty", "timestamp"):
            assert exported_ours[student][column] == exported_theirs[student][column], (student, column)


def test_under_nbgrader_autograde_every_grade_cell_scores_through_grade_part(autograded):
    """In nbgrader's own autograde, the hidden tests are back in every grade cell, the visible part
    prints nothing, and each cell's value is its score: no error and no stderr (nbgrader gives 0 for
    either); the solution earns the maximum, the untouched release 0."""
    from nbgrader.api import Gradebook

    for student in ("ada", "ben"):
        for name in ("attention", "quiz"):
            notebook = nbformat.read(autograded.root / "autograded" / student / ASSIGNMENT / f"{name}.ipynb", 4)
            grade_cells = [c for c in notebook.cells if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")]
            assert grade_cells, name
            for cell in grade_cells:
                assert "grade_part(" in cell.source, cell.source  # restored from the gradebook
                bad = [o for o in cell.outputs if o.output_type == "error" or
                       (o.output_type == "stream" and o.name == "stderr")]
                assert not bad, f"{student}: {name}: nbgrader zeroes a grade cell with {bad}"
                assert any(o.output_type == "execute_result" for o in cell.outputs), f"{student}: {name}"
                shown = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
                assert "self-checks pass" not in shown and "answers are right" not in shown, shown
                if name == "quiz":  # a self-check quiz: its checks shown, its score not counted
                    assert "Reported, not counted" in shown, shown
                    assert [o.data["text/plain"] for o in cell.outputs if o.output_type == "execute_result"] == ["0.0"]
    with Gradebook("sqlite:///" + str(autograded.root / "gradebook.db")) as gb:
        max_score = gb.find_assignment(ASSIGNMENT).max_score
        assert max_score == sum(GRADEBOOK_POINTS.values())
        assert gb.find_submission(ASSIGNMENT, "ada").score == max_score
        assert gb.find_submission(ASSIGNMENT, "ben").score == 0


def test_gradebook_records_look_like_autogrades(course, graded, autograded):
    """Same submissions, notebooks, grade cells, comments and flags as nbgrader writes."""
    from nbgrader.api import Gradebook

    def records(root: Path) -> dict:
        seen = {}
        with Gradebook("sqlite:///" + str(root / "gradebook.db")) as gb:
            for sub in gb.assignment_submissions(ASSIGNMENT):
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        seen[sub.student.id, nb.name, grade.name] = (
                            grade.auto_score, grade.manual_score, grade.needs_manual_grade, grade.max_score)
                    for comment in nb.comments:
                        seen[sub.student.id, nb.name, "comment:" + comment.name] = comment.auto_comment
        return seen

    assert records(course.root) == records(autograded.root)


def test_autograded_notebooks_show_the_checks(course, graded):
    """``autograded/`` holds nbgrader's sanitised notebooks; each grade cell's
    output is the list of checks and the part's score."""
    notebook = course.root / "autograded" / "cleo" / ASSIGNMENT / "attention.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    cells = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells
             if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")}
    assert sorted(cells) == ["grade-heads", "grade-masks", "grade-positions", "grade-scaling", "grade-tiles",
                             "grade-timing"]
    masks = cells["grade-masks"]
    assert "grade_part(" in masks.source  # hidden tests restored from the gradebook, as autograde does
    text = "".join(o.text for o in masks.outputs if o.output_type == "stream")
    assert "[FAILED] masks/apply_mask" in text and "Likely mistake" in text
    result = [o for o in masks.outputs if o.output_type == "execute_result"]
    assert result and float(result[0].data["text/plain"]) < PART_POINTS["masks"]


def test_generate_feedback_shows_our_scores(course, graded):
    import re

    course.nbgrader("generate_feedback", ASSIGNMENT, "--force")
    page = (course.root / "feedback" / "cleo" / ASSIGNMENT / "attention.html").read_text()
    text = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    assert "[FAILED] masks/apply_mask" in text
    scores = C.gradebook_part_scores(course.root / "gradebook.db")["cleo"]
    assert f"Score: {scores['masks']:.1f} / {PART_POINTS['masks']:.1f}" in text


def test_rerun_regrades_only_resubmissions(course, graded):
    out, _ = graded
    before = {s: (out / s / "results.json").stat().st_mtime for s in STUDENTS}
    scores_before = C.gradebook_part_scores(course.root / "gradebook.db")
    later = max(before.values()) + 60
    for student in STUDENTS:  # as a later `nbgrader collect --update` leaves every file: newer, mostly the same
        for notebook in (course.root / "submitted" / student / ASSIGNMENT).glob("*.ipynb"):
            os.utime(notebook, (later, later))
    resubmitted = course.root / "submitted" / "ben" / ASSIGNMENT / "quiz.ipynb"
    notebook = json.loads(resubmitted.read_text())
    answer = [c for c in notebook["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution")][-1]
    answer["source"] = "".join(answer["source"]) + "\n# resubmitted\n"  # a change the grader reads: an answer cell
    resubmitted.write_text(json.dumps(notebook))
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--nbgrader", ASSIGNMENT, "--out", str(out),
                           "--secret", SECRET], cwd=course.root, env=course.env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = {s: (out / s / "results.json").stat().st_mtime for s in STUDENTS}
    assert [s for s in STUDENTS if after[s] != before[s]] == ["ben"]
    assert f"1 submission(s) graded, {len(STUDENTS) - 1} reused" in proc.stdout, proc.stdout[-2000:]
    assert C.gradebook_part_scores(course.root / "gradebook.db") == scores_before


def test_counting_a_quiz_the_release_gave_no_points_is_refused(course, graded, tmp_path):
    """--quiz-counts on a course whose release leaves the self-check quiz out would give grades.csv one total
    and nbgrader's gradebook another: the run is refused before grading, saying what differs and how to make
    them agree; nothing is written."""
    copy = C.Course.open(tmp_path / "copy", course.course_id)
    shutil.copytree(course.work, copy.work, symlinks=True)
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--nbgrader", ASSIGNMENT, "--quiz-counts",
                           "--out", str(tmp_path / "reports"), "--secret", SECRET], cwd=copy.root, env=copy.env(),
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "grade-quiz: this run counts it (--quiz-counts), but the course's release gives it 0 points" in proc.stderr
    assert "grade without --quiz-counts" in proc.stderr and "c.QuizRelease.counts = True" in proc.stderr
    assert not (tmp_path / "reports" / "grades.csv").exists()


def totals_everywhere(copy: C.Course, out: Path, roster: Path) -> dict[str, dict[str, str]]:
    """Each student's total as every place shows it: the table the run prints, grades.csv, `nbgrader export`,
    and Canvas's and Moodle's files exported from grades.csv and from the gradebook."""
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", "--nbgrader", ASSIGNMENT, "--out", str(out),
                          "--secret", SECRET], cwd=copy.root, env=copy.env(), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    header = [h.strip() for h in lines[0].split("  ") if h.strip()]
    found: dict[str, dict[str, str]] = {s: {} for s in STUDENTS}
    for line in lines[2:2 + len(STUDENTS)]:
        cells = line.split()
        found[cells[0]]["table"] = cells[header.index("total")]
    for row in read_csv(out / "grades.csv"):
        found[row["submission"]]["grades.csv"] = row["total"]
    for row in C.export_grades(copy, copy.work / "export.csv"):
        found[row["student_id"]]["nbgrader export"] = f"{float(row['score']):g}"
    files = {}
    for source in (["--from-grades", str(out)], ["--nbgrader", ASSIGNMENT]):
        canvas, moodle = copy.work / f"canvas{len(files)}.csv", copy.work / f"moodle{len(files)}.csv"
        done = subprocess.run([sys.executable, "-m", "autograder", "export", *source, "--roster", str(roster),
                               "--canvas", str(canvas), "--moodle", str(moodle), "--per-part", "--moodle-points"],
                              cwd=copy.root, env=copy.env(), capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        files[source[0]] = (canvas.read_text(), moodle.read_text())
        for row in csv.DictReader(io.StringIO(moodle.read_text())):
            found[row["Username"]][f"Moodle {source[0]}"] = row[ASSIGNMENT]
            parts = sum(float(v) for k, v in row.items() if k.startswith(f"{ASSIGNMENT}: "))
            found[row["Username"]][f"Moodle {source[0]}, its parts added up"] = f"{parts:g}"
        for row in list(csv.reader(io.StringIO(canvas.read_text())))[2:]:
            found[row[0]][f"Canvas {source[0]}"] = row[-1]
    assert files["--from-grades"] == files["--nbgrader"]  # no late penalty here: the same files from either
    return found


@pytest.mark.parametrize("mode", ["self-check", "counted"])
def test_one_total_everywhere(course, graded, tmp_path, mode):
    """In each quiz mode, the table the run prints, grades.csv, nbgrader's gradebook and export, and every LMS
    file agree on each student's total; a self-check quiz is shown apart (labelled in the table, no Moodle
    column of its own). The counted course is the same one with its release built again as counted."""
    copy = C.Course.open(tmp_path / "copy", course.course_id)
    shutil.copytree(course.work, copy.work, symlinks=True)  # its reports too: what was graded is reused
    if mode == "counted":
        with (copy.root / "nbgrader_config.py").open("a") as fh:
            fh.write('\nc.QuizRelease.mode = "counted"\n')
        copy.generate()
    roster = copy.work / "roster.csv"
    roster.write_text("id,name,canvas_id,username\n" + "".join(f"{s},{s},{i},{s}\n" for i, s in enumerate(STUDENTS)))
    found = totals_everywhere(copy, copy.work / "reports", roster)
    for student, totals in found.items():
        assert len(set(totals.values())) == 1 and len(totals) == 9, (student, totals)
    quiz = PART_POINTS["quiz"] if mode == "counted" else 0
    assert found["ada"]["grades.csv"] == f"{sum(PART_POINTS.values()) - PART_POINTS['quiz'] + quiz:g}"


def test_the_courses_own_setup_cell_is_what_runs(course, graded, tmp_path):
    """An instructor adds `import numpy as np` to the setup cell of the course's copy and builds the release:
    an answer that uses np is graded with it (it once ran another build's setup cell: NameError)."""
    copy = C.Course.open(tmp_path / "copy", course.course_id)
    shutil.copytree(course.work, copy.work, symlinks=True)
    source = copy.root / "assignments" / ASSIGNMENT / "attention.ipynb"
    nb = nbformat.read(source, as_version=4)
    setup = next(c for c in nb.cells if c.get("id") == "setup")
    setup.source += "\nimport numpy as np"
    nbformat.write(nb, source)
    copy.generate()
    submitted = copy.root / "submitted" / "ada" / ASSIGNMENT / "attention.ipynb"
    nb = nbformat.read(submitted, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "masks-causal_average")
    cell.source = ("def causal_average(T: int) -> torch.Tensor:\n"
                   "    rows = np.tril(np.ones((T, T), dtype=np.float32))\n"
                   "    return torch.from_numpy(rows / rows.sum(axis=1, keepdims=True))\n")
    nbformat.write(nb, submitted)
    proc = C.grade_course(copy, copy.work / "reports", "--secret", SECRET)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {r["submission"]: r for r in read_csv(copy.work / "reports" / "grades.csv")}
    assert float(rows["ada"]["masks"]) == PART_POINTS["masks"], rows["ada"]


def test_ungraded_submissions_wait_for_a_person(course, graded, tmp_path):
    """A submission our grader could not grade is not given a score: every
    grade cell is left for manual grading."""
    out, _ = graded
    copy = tmp_path / "course"
    shutil.copytree(course.root, copy)
    reports = tmp_path / "reports"
    shutil.copytree(out, reports)
    (reports / "ben" / "results.json").unlink()
    opened = open_course(ASSIGNMENT, copy)
    update = G.record(opened, reports, STUDENTS)
    assert update.manual == ["ben"] and not update.errors, update
    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(copy / "gradebook.db")) as gb:
        grades = gb.find_submission(ASSIGNMENT, "ben").notebooks[0].grades
        assert grades and all(g.auto_score is None and g.needs_manual_grade for g in grades)
        ada = gb.find_submission(ASSIGNMENT, "ada")
        assert ada.score == sum(GRADEBOOK_POINTS.values())


def test_a_notebook_nbgrader_refuses_costs_only_its_own_gradebook_entry(course, graded, tmp_path):
    """One answer cell whose nbgrader metadata says schema_version 99 stops nbgrader's converter for the
    whole batch; the gradebook writer tries the others one by one: they are written, the one it refuses
    waits for a person, its status says why, and the run's exit status is 0."""
    out, _ = graded
    copy = C.Course.open(tmp_path / "copy", course.course_id)
    shutil.copytree(course.work, copy.work, symlinks=True)
    notebook = copy.root / "submitted" / "cleo" / ASSIGNMENT / "attention.ipynb"
    data = json.loads(notebook.read_text())
    answer = next(c for c in data["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    answer["metadata"]["nbgrader"]["schema_version"] = 99
    notebook.write_text(json.dumps(data))
    proc = C.grade_course(copy, copy.work / "reports", "--secret", SECRET, "--force")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    scores = C.gradebook_part_scores(copy.root / "gradebook.db")
    assert all(scores[s] == C.gradebook_part_scores(course.root / "gradebook.db")[s] for s in STUDENTS if s != "cleo")
    assert set(scores.get("cleo", {}).values()) <= {None}, scores.get("cleo")
    rows = {r["submission"]: r for r in read_csv(copy.work / "reports" / "grades.csv")}
    assert "not in the gradebook" in rows["cleo"]["status"] and rows["ada"]["status"] == "graded"
    assert "cleo" in proc.stderr and "manual grading" in proc.stderr


def test_the_converter_shares_one_database_engine(course, graded, tmp_path, monkeypatch):
    """nbgrader opens a Gradebook (and an engine) per notebook and per step; while our writer runs its
    converter and its checks after it, they share one, and so do the batches of one run, so a query is
    compiled once. The scores are the same (tests above)."""
    from nbgrader import api

    out, _ = graded
    copy = tmp_path / "course"
    shutil.copytree(course.root, copy)
    opened = open_course(ASSIGNMENT, copy)
    made = []
    create_engine = api.create_engine
    monkeypatch.setattr(api, "create_engine", lambda *args, **kwargs: made.append(args) or create_engine(*args, **kwargs))
    with G.SharedEngines() as engines:  # as the run's writer does: one batch per student here
        for student in STUDENTS:
            update = G.record(opened, out, [student], engines=engines)
            assert update.written == [student] and not update.errors, update
    assert len(made) == 1, made  # nbgrader alone opens over 60 for one batch here
    assert api.create_engine.__name__ == "<lambda>"  # what it was before record(), put back


def test_the_writer_replaces_nbgrader_code_on_the_runs_thread_alone(course, graded, tmp_path):
    """The run's thread installs the speed-ups when it starts the gradebook's writer and removes them when it
    finishes it: the writer's own thread patches no module and changes no folder (issue 55)."""
    import threading
    import types

    from nbgrader import api

    out, _ = graded
    copy = tmp_path / "course"
    shutil.copytree(course.root, copy)
    opened = open_course(ASSIGNMENT, copy)
    original, folder = api.create_engine, os.getcwd()
    patched_by = []  # (name, whether the run's thread set it) for each module attribute set

    class Watched(types.ModuleType):
        def __setattr__(self, name, value):
            patched_by.append((name, threading.current_thread() is threading.main_thread()))
            super().__setattr__(name, value)

    api.__class__ = Watched
    try:
        writer = G.GradebookWriter(opened, out)
        assert api.create_engine is not original  # installed here, on this (the run's) thread
        for student in STUDENTS:
            writer.add(G.read_report(out, student))
        written, _, _ = writer.finish()
    finally:
        api.__class__ = types.ModuleType
    assert written and api.create_engine is original and os.getcwd() == folder
    assert patched_by and all(on_main for _, on_main in patched_by), patched_by


def _written(root: Path, course_id: str) -> tuple[list, dict]:
    """What the gradebook writer leaves in a course: the gradebook's students, submissions, grades and
    comments, and the autograded notebooks."""
    from nbgrader.api import Gradebook

    rows: list = []
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}", course_id) as gb:
        for submission in gb.assignment_submissions(ASSIGNMENT):
            student = submission.student
            rows.append((student.id, student.first_name, student.last_name, str(submission.timestamp)))
            for notebook in submission.notebooks:
                rows += [(student.id, notebook.name, g.name, g.auto_score, g.manual_score, g.needs_manual_grade)
                         for g in notebook.grades]
                rows += [(student.id, notebook.name, c.name, c.auto_comment, c.manual_comment) for c in notebook.comments]
    notebooks = {p.relative_to(root): p.read_bytes() for p in sorted((root / "autograded").rglob("*")) if p.is_file()}
    return sorted(rows, key=repr), notebooks


def test_the_speedups_write_what_nbgrader_alone_writes(course, graded, tmp_path, monkeypatch):
    """The gradebook writer's speed-ups that replace parts of nbgrader's code (shared engines, a notebook's
    cells read at once, its grades committed at once, the metadata schema checked once) apply only with the
    versions they were written for (versions.WRITTEN_FOR, as requirements.lock pins them); with any other,
    nbgrader's own code runs. Both ways, the class's gradebook holds the same rows and its autograded
    notebooks are the same, byte for byte."""
    from nbgrader import api
    from nbgrader.api import Gradebook

    out, _ = graded
    written, engines = {}, {}
    create_engine, made = api.create_engine, []

    def counted_engine(*args, **kwargs):
        made.append(args)
        return create_engine(*args, **kwargs)

    for way in ("sped up", "nbgrader's own code"):
        if way != "sped up":
            monkeypatch.setattr(versions, "WRITTEN_FOR", {})  # as with versions they were not written for
        copy = tmp_path / way
        shutil.copytree(course.root, copy)
        shutil.rmtree(copy / "autograded")
        with Gradebook(f"sqlite:///{copy / 'gradebook.db'}", course.course_id) as gb:  # as after collect
            for student in STUDENTS:
                gb.remove_student(student)
        opened = open_course(ASSIGNMENT, copy)
        made.clear()
        monkeypatch.setattr(api, "create_engine", counted_engine)
        with G.SharedEngines() as shared:  # one batch per student, as the run's writer
            for student in STUDENTS:
                update = G.record(opened, out, [student], engines=shared)
                assert update.written == [student] and not update.errors, update
        monkeypatch.setattr(api, "create_engine", create_engine)
        written[way], engines[way] = _written(copy, course.course_id), len(made)
    assert engines["sped up"] == 1 and engines["nbgrader's own code"] > len(STUDENTS), engines
    rows, notebooks = written["sped up"]
    assert len(rows) > len(STUDENTS)
    assert sum(path.suffix == ".ipynb" for path in notebooks) == len(STUDENTS) * len(assignment.NOTEBOOKS)
    assert written["sped up"] == written["nbgrader's own code"]


def test_opening_a_course_does_not_build_the_iri_grammars(course):
    """jsonschema builds rfc3987_syntax's parsers at import (1.5 s of every run's start-up), for string
    formats nothing here checks: opening a course goes without them, and nbformat still validates."""
    code = ("import sys; from autograder.nbgrader.course import open_course; "
            f"open_course({ASSIGNMENT!r}, {str(course.root)!r}); import nbformat; "
            "nbformat.validate(nbformat.v4.new_notebook()); print(sys.modules.get('rfc3987_syntax', 'absent'))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded in ("None", "absent"), loaded


def test_student_code_cannot_see_the_course(course):
    """Nothing of the course (source with solutions, other submissions, gradebook, exchange) is in
    the sandboxes' view when the grader names the course root as secret, as --nbgrader does."""
    view = sandbox_view([course.root])
    for folder in (course.root, course.root / "assignments", course.exchange):
        folder = str(folder.resolve())
        assert not any(inside(folder, e) for e in view.expose) or folder in view.hide or any(
            inside(folder, h) for h in view.hide), folder


def test_not_a_course(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli_main(["grade", "--nbgrader", ASSIGNMENT, "--out", str(tmp_path / "out"), "--secret", "x"]) == 2
    assert "no nbgrader_config.py" in capsys.readouterr().err


def test_assignment_never_generated(tmp_path, monkeypatch, capsys):
    root = C.make_course_root(tmp_path / "course", course_id="x", exchange=tmp_path / "exchange")
    monkeypatch.chdir(root)
    assert cli_main(["grade", "--nbgrader", ASSIGNMENT, "--out", str(tmp_path / "out"), "--secret", "x"]) == 2
    assert "nbgrader generate_assignment" in capsys.readouterr().err


# --------------------------------------------------------------------------
# make demo


def test_demo_class_scores_as_expected(tmp_path):
    """The demo's class through nbgrader and our grader: full marks at the
    maximum, stubs at 0, each mistake losing points in its part only, hostile
    students getting no points they did not earn; all in the gradebook too."""
    students = demo.roster()
    assert len(students) >= 12
    course = demo.build(tmp_path / "demo", students, say=lambda _m: None)
    out = tmp_path / "demo" / "reports"
    outcome = demo.grade(course, out, quiet=True, timeout=5)  # the student with an infinite loop costs this once
    assert outcome.status == 0, outcome.gradebook_line
    problems = demo.check_pattern(students, out)
    assert not any(problems.values()), {k: v for k, v in problems.items() if v}
    rows = demo.read_rows(out)
    in_gradebook = C.gradebook_part_scores(course.root / "gradebook.db")
    for s in students:
        assert in_gradebook[s.name] == {p: min(float(rows[s.name][p]), GRADEBOOK_POINTS[p]) for p in demo.PARTS}, \
            s.name
    # Item statistics beside grades.csv: a row per check; hana's two wrong answers are the only wrong options chosen.
    checks = [t["name"] for t in json.loads((out / "ada" / "results.json").read_text())["tests"]]
    with open(out / "items.csv", newline="") as fh:
        assert [row["item"] for row in csv.DictReader(fh)] == checks
    with open(out / "quiz_options.csv", newline="") as fh:
        wrong = {row["question"].split(":")[0] for row in csv.DictReader(fh)
                 if row["correct"] == "no" and row["chosen"] != "0"}
    assert wrong == {"quiz/q03", "quiz/q07"}


def test_demo_students_write_valid_python():
    """Every answer cell of every demo student compiles, and a corpus patch
    comes with the base.py helpers it uses (a NameError would lose the points
    for another reason than the mistake)."""
    solutions = C.solution_answers()
    for s in demo.roster():
        for _notebook, cells in s.student.work(solutions).items():
            for grade_id, code in cells.items():
                compile(code, f"{s.name}:{grade_id}", "exec")
    cell, code = C.with_patch("x", "", "timing_mean").answers.popitem()
    assert cell == "timing-time_call" and "def _sync" in code and "statistics.mean" in code


@pytest.mark.parametrize("corrupted", [{}, {"locked": "yes"}, {"grade_id": 5}, {"points": "two"}])
def test_cell_metadata_is_checked_as_nbgrader_checks_it(corrupted):
    """While our gradebook writer runs nbgrader's converter, its metadata check has its schema checked
    once, not per cell: the verdicts are nbgrader's own, with and without that."""
    from nbgrader.nbgraderformat import MetadataValidator

    cell = nbformat.v4.new_code_cell("x = 1")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "points": 2, "task": False,
                                 "grade_id": "grade-masks", "schema_version": 3, **corrupted}
    notebook = nbformat.v4.new_notebook(cells=[cell])

    def verdict() -> str:
        try:
            MetadataValidator().validate_nb(notebook)
        except Exception as exc:  # noqa: BLE001 - the verdict is the exception's type
            return type(exc).__name__
        return "valid"

    plain = verdict()
    with G._metadata_schema_checked_once():
        checked_once = verdict()
    assert checked_once == plain == ("valid" if not corrupted else "ValidationError")
