"""The public Python API (autograder/api.py, issue 55): each use returns values and prints nothing.

Without sandboxes: a run's results read back from reports the grader's own writers wrote, the LMS files exported
from a grades.csv the grader's own writer wrote (the same text `reports.lms` makes, written where asked), what
each refuses, and the command line's `export` and `grade` going through the API. One slow test grades the
corpus's base.py alone and in a class of two, masks only."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autograder import api, assignment, cli, reports
from autograder.model.results import CheckResult, Counting, GradedSubmission
from autograder.model.tampering import Tampering
from autograder.pool.batch import write_record
from autograder.reports import lms
from autograder.reports.table import grades_csv

PARTS = assignment.PART_NAMES
ROSTER = "id,canvas_id,username\nada,101,ada\nben,102,ben\n"
CORPUS = Path(__file__).resolve().parents[1] / "corpus"


def graded(sid: str, wrong: tuple[str, ...] = (), counting: Counting | None = None) -> GradedSubmission:
    """One check per part, out of 2 points; `wrong`: the parts it failed."""
    return GradedSubmission(sid, [CheckResult(p, "all", 2.0, passed=p not in wrong, hint="h" if p in wrong else "")
                                  for p in PARTS], counting=counting or Counting())


def class_folder(tmp_path: Path) -> tuple[Path, list[GradedSubmission]]:
    """A run's reports folder as the grader writes it: each submission's results.json (and its record), the
    class's grades.csv."""
    out = tmp_path / "reports"
    left_out = Counting(uncounted=frozenset({"quiz"}))
    subs = [graded("ada", counting=left_out), graded("ben", ("masks",), counting=left_out)]
    subs[1].tampering = Tampering({"patches": 2}, ["torch.allclose"])
    for g in subs:
        reports.write_submission(g, out)
        write_record(out, g, "fingerprint")
    reports.write_class(subs, out, similar=None)
    return out, subs


# --------------------------------------------------------------------------
# read_results


def test_read_results_gives_back_what_the_run_wrote(tmp_path):
    out, subs = class_folder(tmp_path)
    results = api.read_results(str(out))
    assert results.folder == out and list(results.submissions) == ["ada", "ben"]
    for g in subs:
        back = results[g.id]
        assert (back.total, back.max_score, back.part_scores()) == (g.total, g.max_score, g.part_scores())
        assert back.uncounted_parts() == ["quiz"] and back.status is g.status
    assert results["ben"].tampering.counts == {"patches": 2}  # from the grader's own record beside results.json
    assert [c.hint for c in results["ben"].checks_of("masks")] == ["h"]
    assert [(row["submission"], row["total"], row["not_in_total"]) for row in results.grades] == [
        ("ada", f"{subs[0].total:g}", "quiz"), ("ben", f"{subs[1].total:g}", "quiz")]


def test_read_results_reads_one_results_json_alone(tmp_path):
    out, subs = class_folder(tmp_path)
    shutil.copy(out / "ben" / "results.json", tmp_path / "results.json")
    results = api.read_results(tmp_path / "results.json")
    assert list(results.submissions) == ["ben"] and results.grades == []
    assert results["ben"].total == subs[1].total
    assert results["ben"].tampering.counts == {}  # results.json alone: what was tried is not in it


def test_read_results_refuses_what_is_not_results(tmp_path):
    with pytest.raises(api.ResultsError, match="no such folder"):
        api.read_results(tmp_path / "nowhere")
    with pytest.raises(api.ResultsError, match="no results in it"):
        api.read_results(tmp_path)
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "results.json").write_text("{not json")
    with pytest.raises(api.ResultsError, match="ada/results.json: not a results.json"):
        api.read_results(tmp_path)


# --------------------------------------------------------------------------
# export_grades


def grades_and_roster(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "grades.csv").write_text(grades_csv([graded("ada"), graded("ben", ("heads",))]))
    (tmp_path / "roster.csv").write_text(ROSTER)
    return tmp_path / "grades.csv", tmp_path / "roster.csv"


def test_export_grades_writes_the_lms_files_and_returns_them(tmp_path, capsys):
    grades, roster = grades_and_roster(tmp_path)
    exported = api.export_grades(roster, grades=tmp_path, canvas=tmp_path / "canvas.csv",
                                 moodle=str(tmp_path / "moodle.csv"), per_part=True)
    expected, warnings = lms.exports(lms.scores_from_grades_csv(grades), lms.read_roster(roster), canvas=True,
                                     moodle=True, name=assignment.ASSIGNMENT, per_part=True)
    assert list(exported.files) == [tmp_path / "canvas.csv", tmp_path / "moodle.csv"]
    assert list(exported.files.values()) == expected and exported.warnings == tuple(warnings)
    for path, export in exported.files.items():
        assert path.read_bytes() == export.text.encode("utf-8") and export.rows == 2  # CRLF line ends kept
    assert exported.every_warning == [*warnings, *(w for e in expected for w in e.warnings)]
    assert capsys.readouterr() == ("", "")  # the library prints nothing


@pytest.mark.parametrize("given, message", [
    ({"canvas": "c.csv"}, "give one of grades"),
    ({"grades": "grades.csv", "nbgrader": "attention", "canvas": "c.csv"}, "give one of grades"),
    ({"grades": "grades.csv"}, "a Canvas file, a Moodle file or both"),
    ({"grades": "grades.csv", "canvas": "c.csv", "per_part": True}, "per_part is for Moodle"),
    ({"grades": "grades.csv", "canvas": "c.csv", "moodle": "c.csv"}, "must be different files"),
    ({"grades": "grades.csv", "canvas": "roster.csv"}, "must be different files"),
    ({"grades": ".", "moodle": "grades.csv"}, "must be different files"),
    ({"grades": "nowhere.csv", "canvas": "c.csv"}, "no such grades.csv file"),
    ({"nbgrader": "attention", "canvas": "c.csv", "course_root": "."}, "not an nbgrader course root"),
])
def test_export_grades_refuses_what_it_cannot_export(tmp_path, monkeypatch, given, message):
    grades_and_roster(tmp_path)
    before = (tmp_path / "roster.csv").read_text(), (tmp_path / "grades.csv").read_text()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(api.ExportError, match=message):
        api.export_grades("roster.csv", **given)
    assert not (tmp_path / "c.csv").exists()
    assert ((tmp_path / "roster.csv").read_text(), (tmp_path / "grades.csv").read_text()) == before


def test_the_command_lines_export_prints_what_the_api_wrote(tmp_path, capsys):
    grades, roster = grades_and_roster(tmp_path)
    assert cli.main(["export", "--from-grades", str(grades), "--roster", str(roster),
                     "--canvas", str(tmp_path / "canvas.csv"), "--moodle-points", "--moodle",
                     str(tmp_path / "moodle.csv")]) == 0
    printed = capsys.readouterr().out.splitlines()
    total = len(PARTS) * 2
    assert printed == [f"Canvas: wrote {tmp_path / 'canvas.csv'} (2 student(s), out of {total})",
                       f"Moodle: wrote {tmp_path / 'moodle.csv'} (2 student(s), out of {total})"]
    assert (tmp_path / "moodle.csv").read_text().splitlines()[1:] == [f"ada,{total}", f"ben,{total - 2}"]


# --------------------------------------------------------------------------
# grading, up to the sandboxes


def test_grade_class_runs_the_class_run_with_paths_as_given(tmp_path, monkeypatch):
    """Paths given as strings are made Paths; the outcome is the class run's, returned as it is."""
    seen = []
    outcome = api.RunOutcome([graded("ada")], [])
    monkeypatch.setattr(api, "run_class", lambda options: seen.append(options) or outcome)
    options = api.RunOptions(out=str(tmp_path / "out"), paths=(str(tmp_path / "a.py"),), secret="s",  # type: ignore[arg-type]
                             course_root=str(tmp_path))  # type: ignore[arg-type]
    assert api.grade_class(options) is outcome
    (ran,) = seen
    assert ran.out == tmp_path / "out" and ran.paths == (tmp_path / "a.py",) and ran.course_root == tmp_path
    assert ran.secret == "s" and ran.parts == PARTS


def test_the_command_lines_grade_goes_through_the_api(tmp_path, monkeypatch, capsys):
    seen = []

    def refused(options):
        seen.append(options)
        raise api.RunError("no worker could grade", 1)

    monkeypatch.setattr(api, "run_class", refused)
    assert cli.main(["grade", str(tmp_path), "--out", str(tmp_path / "out"), "--parts", "masks", "--quiet"]) == 1
    assert seen[0].parts == ("masks",) and not seen[0].progress
    assert "error: no worker could grade" in capsys.readouterr().err


def test_grade_submission_grades_one_students_work_only(tmp_path, monkeypatch):
    """A class folder, an unknown part or a missing file is refused before anything is graded."""
    monkeypatch.setattr(api, "run_class", lambda options: pytest.fail("graded"))
    for student in ("alice", "bob"):
        (tmp_path / "class" / student).mkdir(parents=True)
        shutil.copy(CORPUS / "base.py", tmp_path / "class" / student / "solution.py")
    with pytest.raises(api.RunError, match="holds the work of 2 students, not one: grade it with grade_class"):
        api.grade_submission(tmp_path / "class")
    with pytest.raises(api.RunError, match="nonsense"):
        api.grade_submission(CORPUS / "base.py", parts=("masks", "nonsense"))
    with pytest.raises(api.RunError, match="no such file or folder"):
        api.grade_submission(tmp_path / "nowhere.py")


def test_grade_submission_returns_the_one_result_and_leaves_no_reports(tmp_path, monkeypatch):
    seen = []

    def run(options):
        seen.append(options)
        (options.out / "base").mkdir(parents=True)
        return api.RunOutcome([graded("base")], [])

    monkeypatch.setattr(api, "run_class", run)
    result = api.grade_submission(str(CORPUS / "base.py"), secret="s", parts=("heads", "masks"))
    (options,) = seen
    assert result.id == "base" and options.paths == (CORPUS / "base.py",)
    assert options.parts == ("masks", "heads") and not options.progress and options.similarity is None
    assert not options.out.exists()  # a temporary folder, removed
    api.grade_submission(CORPUS / "base.py", out=tmp_path / "kept")
    assert seen[1].out == tmp_path / "kept" and (tmp_path / "kept" / "base").is_dir()


def test_every_name_the_api_exports_is_there():
    assert all(hasattr(api, name) for name in api.__all__)
    assert {"grade_class", "grade_submission", "export_grades", "read_results"} <= set(api.__all__)


# --------------------------------------------------------------------------
# in sandboxes


@pytest.mark.slow  # two class runs in sandboxes, masks only (about a minute)
def test_grading_the_corpus_base_alone_and_in_a_class(tmp_path):
    base = tmp_path / "base.py"
    shutil.copy(CORPUS / "base.py", base)
    wrong = tmp_path / "wrong.py"
    wrong.write_text(base.read_text() + "\n\ndef causal_average(T):\n    return torch.ones(T, T) / T\n")

    alone = api.grade_submission(base, secret="api", parts=("masks",))
    score, most = alone.part_scores()["masks"]
    assert alone.id == "base" and alone.status is api.Status.GRADED and list(alone.part_scores()) == ["masks"]
    assert most > 0 and score == most and alone.total == most

    out = tmp_path / "reports"
    outcome = api.grade_class(api.RunOptions(out=out, paths=(base, wrong), secret="api", parts=("masks",), jobs=2,
                                             progress=False, similarity=None))
    assert outcome.status == 0 and not outcome.kept
    totals = {g.id: g.total for g in outcome.graded}
    assert totals["base"] == most and totals["wrong"] < most
    back = api.read_results(out)
    assert {sid: g.total for sid, g in back.submissions.items()} == totals
    assert {row["submission"]: float(row["total"]) for row in back.grades} == totals
    assert json.loads((out / "base" / "results.json").read_text())["score"] == most


@pytest.mark.slow  # a class run in sandboxes, masks only
def test_a_class_run_prints_nothing_and_says_everything_through_tell(tmp_path, capfd):
    """The library returns what happened; only the command line prints (issue 55). Without a secret the run
    warns; with `progress` it also says its isolation and the quiz's line, and reports each submission."""
    base = tmp_path / "base.py"
    shutil.copy(CORPUS / "base.py", base)
    told, progress = [], []
    outcome = api.grade_class(api.RunOptions(out=tmp_path / "reports", paths=(base,), parts=("masks",),
                                             similarity=None, tell=told.append,
                                             on_progress=lambda done, total: progress.append((done, total))))
    printed = capfd.readouterr()
    assert printed.out == "" and printed.err == ""
    assert outcome.lines == told and told[0].startswith("warning: no --secret")
    assert any(line.startswith("isolation: ") for line in told) and any(line.startswith("quiz: ") for line in told)
    assert progress == [(0, 1), (1, 1)]
    quiet = api.grade_class(api.RunOptions(out=tmp_path / "again", paths=(base,), parts=("masks",), secret="s",
                                           similarity=None, progress=False))
    assert quiet.lines == [] and capfd.readouterr().err == ""
