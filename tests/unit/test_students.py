"""Which students a PATH holds (core/students.py): the split rules on small trees and zips, no grading.

A class folder, a folder of zips and each LMS's bulk-download names give one (path, id) per student,
the files of one student together; a folder that mixes ways of naming, or holds work of its own beside
students' entries, is refused with what was found; one student's folder is still one submission.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from autograder.core import students
from autograder.core.students import LayoutError, Staging, held_by
from autograder.core.submission import read_submission


def files(root: Path, *names: str) -> Path:
    """`root` with each name (a path, `/` for a folder) made, a file holding its own name."""
    for name in names:
        path = root / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# {name}\n")
    return root


def zipped(path: Path, *names: str) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, f"# {name}\n")
    return path


def split(path: Path, tmp_path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """(path relative to `path`'s parent or the staging folder, id) of each student, and the notes."""
    held = held_by(path, Staging())
    return [(_shown(p, path), sid) for p, sid in held.students], held.notes


def _shown(student: Path, given: Path) -> str:
    if student == given or given in student.parents:
        return str(student.relative_to(given.parent))
    return "staged:" + ",".join(sorted(os.listdir(student)))


# -------------------------------------------------------------- several students


def test_a_class_folder_is_a_submission_per_student_folder(tmp_path):
    root = files(tmp_path / "class", "alice/attention.ipynb", "alice/quiz.ipynb", "bob/solution.py",
                 "carol/work/attention.ipynb", "grades.csv")
    found, notes = split(root, tmp_path)
    assert found == [("class/alice", "alice"), ("class/bob", "bob"), ("class/carol", "carol")]
    assert notes == [f"{root}: 3 students (a folder or zip per student), each graded as a submission of its own"]


def test_a_folder_of_zips_is_a_submission_per_zip(tmp_path):
    root = tmp_path / "zips"
    root.mkdir()
    zipped(root / "alice.zip", "attention.ipynb", "quiz.ipynb")
    zipped(root / "bob.zip", "solution.py")
    assert split(root, tmp_path)[0] == [("zips/alice.zip", "alice"), ("zips/bob.zip", "bob")]


def test_a_class_folder_inside_a_download_folder_is_looked_into(tmp_path):
    root = files(tmp_path / "downloads", "submissions/alice/attention.ipynb", "submissions/bob/solution.py", "notes.txt")
    assert split(root, tmp_path)[0] == [("downloads/submissions/alice", "alice"), ("downloads/submissions/bob", "bob")]


def test_canvas_names_put_one_users_files_together(tmp_path):
    root = files(tmp_path / "canvas", "smithjohn_12345_678_attention.ipynb", "smithjohn_12345_679_quiz.ipynb",
                 "leeann_LATE_23456_680_attention-1.ipynb", "obrien_late_34567_681_solution.py",
                 "LATE_anon_x9Kq2_682_attention.ipynb", "nguyen_45678_text.html")
    found, notes = split(root, tmp_path)
    assert found == [("staged:smithjohn_12345_678_attention.ipynb,smithjohn_12345_679_quiz.ipynb", "12345"),
                     ("staged:leeann_LATE_23456_680_attention-1.ipynb", "23456"),
                     ("staged:obrien_late_34567_681_solution.py", "34567"),
                     ("staged:LATE_anon_x9Kq2_682_attention.ipynb", "anon_x9Kq2")]
    assert "4 students (Canvas bulk-download names)" in notes[0]


def test_a_staged_students_files_read_as_their_own_submission(tmp_path):
    root = files(tmp_path / "canvas", "smithjohn_12345_678_attention.ipynb", "leeann_23456_680_solution.py")
    (root / "smithjohn_12345_679_quiz.ipynb").symlink_to("/etc/passwd")
    staged = dict((sid, path) for path, sid in held_by(root, Staging()).students)
    assert (staged["12345"] / "smithjohn_12345_678_attention.ipynb").stat().st_ino == \
        (root / "smithjohn_12345_678_attention.ipynb").stat().st_ino  # hard-linked, not read
    link = staged["12345"] / "smithjohn_12345_679_quiz.ipynb"
    assert link.is_symlink() and os.readlink(link) != "/etc/passwd"  # a link stays a link, never followed
    assert any("is a symbolic link" in p for p in read_submission(staged["12345"], "12345").problems)
    assert read_submission(staged["23456"], "23456").cells["attention"][0][1] == "# leeann_23456_680_solution.py\n"


def test_moodle_names_flat_and_in_folders(tmp_path):
    flat = files(tmp_path / "flat", "Ann Lee_101_assignsubmission_file_attention.ipynb",
                 "Ann Lee_101_assignsubmission_file_quiz.ipynb", "Bo Chen_102_assignsubmission_file_solution.py")
    assert split(flat, tmp_path)[0] == [
        ("staged:Ann Lee_101_assignsubmission_file_attention.ipynb,Ann Lee_101_assignsubmission_file_quiz.ipynb",
         "Ann Lee_101"), ("staged:Bo Chen_102_assignsubmission_file_solution.py", "Bo Chen_102")]
    folders = files(tmp_path / "folders", "Ann Lee_101_assignsubmission_file/attention.ipynb",
                    "Ann Lee_101_assignsubmission_onlinetext/onlinetext.html",
                    "Bo Chen_102_assignsubmission_file_/sub/solution.py")
    assert split(folders, tmp_path)[0] == [("folders/Ann Lee_101_assignsubmission_file", "Ann Lee_101"),
                                           ("folders/Bo Chen_102_assignsubmission_file_", "Bo Chen_102")]


def test_blackboard_names_grade_the_latest_attempt_with_a_note(tmp_path):
    root = files(tmp_path / "bb", "HW 1_jdoe_attempt_2024-01-01-12-00-00_solution.py",
                 "HW 1_jdoe_attempt_2024-01-01-12-00-00.txt", "HW 1_jdoe_attempt_2024-01-02-09-30-00_attention.ipynb",
                 "HW 1_jdoe_attempt_2024-01-02-09-30-00.txt", "HW 1_asmith_attempt_2024-01-01-08-00-00_attention.ipynb")
    found, notes = split(root, tmp_path)
    assert found == [("staged:HW 1_asmith_attempt_2024-01-01-08-00-00_attention.ipynb", "asmith"),
                     ("staged:HW 1_jdoe_attempt_2024-01-02-09-30-00_attention.ipynb", "jdoe")]
    assert notes[1] == f"jdoe: 2 attempts in {root}; the latest (2024-01-02-09-30-00) is graded"


def test_a_student_who_sent_no_code_still_has_a_row(tmp_path):
    root = files(tmp_path / "class", "alice/attention.ipynb", "bob/report.pdf", "carol/solution.py")
    assert split(root, tmp_path)[0] == [("class/alice", "alice"), ("class/bob", "bob"), ("class/carol", "carol")]
    canvas = files(tmp_path / "canvas", "smithjohn_12345_678_attention.ipynb", "leeann_23456_680_report.pdf")
    assert split(canvas, tmp_path)[0] == [("staged:smithjohn_12345_678_attention.ipynb", "12345"), ("staged:", "23456")]


# -------------------------------------------------------------- a guess: refused


def test_names_of_two_kinds_are_refused_with_what_was_found(tmp_path):
    root = files(tmp_path / "mixed", "smithjohn_12345_678_attention.ipynb", "leeann_23456_680_attention.ipynb",
                 "alice/attention.ipynb")
    with pytest.raises(LayoutError) as error:
        held_by(root, Staging())
    message = str(error.value)
    assert "more than one way" in message and "a folder or zip per student: alice/" in message
    assert "Canvas bulk-download names: leeann_23456_680_attention.ipynb, smithjohn_12345_678_attention.ipynb" in message
    assert f"`grade {root}/<student> ...`" in message


def test_work_of_its_own_beside_students_is_refused(tmp_path):
    root = files(tmp_path / "class", "attention.ipynb", "alice/attention.ipynb", "bob/attention.ipynb")
    with pytest.raises(LayoutError, match=r"notebooks or modules of its own \(attention.ipynb\) beside 2 entries"):
        held_by(root, Staging())


def test_an_nbgrader_course_root_is_refused_with_the_nbgrader_option(tmp_path):
    root = files(tmp_path / "course", "nbgrader_config.py", "source/attention/attention.ipynb",
                 "submitted/alice/attention/attention.ipynb")
    with pytest.raises(LayoutError, match="grade --nbgrader ASSIGNMENT"):
        held_by(root, Staging())


def test_a_zip_of_several_students_is_refused_with_how_to_unzip_it(tmp_path):
    path = zipped(tmp_path / "class.zip", "alice/attention.ipynb", "bob/solution.py")
    with pytest.raises(LayoutError, match=r"a zip of 2 students' work .*`unzip .*class.zip -d DIR`"):
        held_by(path, Staging())


# -------------------------------------------------------------- one student, as before


def test_one_students_folder_is_one_submission(tmp_path):
    root = files(tmp_path / "alice", "attention.ipynb", "quiz.ipynb", ".ipynb_checkpoints/attention-checkpoint.ipynb",
                 "attention (1).ipynb", "__pycache__/x.py", "data/")
    assert split(root, tmp_path) == ([("alice", "alice")], [])


def test_one_students_work_in_a_subfolder_or_in_notebook_folders_is_one_submission(tmp_path):
    inner = files(tmp_path / "alice", "submission/attention.ipynb", "submission/quiz.ipynb")
    assert split(inner, tmp_path) == ([("alice", "alice")], [])
    parts = files(tmp_path / "bob", "attention/attention.ipynb", "quiz/quiz.ipynb", "Quiz.zip")
    assert split(parts, tmp_path) == ([("bob", "bob")], [])


def test_one_students_zip_and_one_users_lms_files_are_one_submission(tmp_path):
    assert split(zipped(tmp_path / "alice.zip", "alice/attention.ipynb", "alice/quiz.ipynb"), tmp_path)[0] == \
        [("alice.zip", "alice")]
    root = files(tmp_path / "john", "smithjohn_12345_678_attention.ipynb", "smithjohn_12345_679_quiz.ipynb")
    assert split(root, tmp_path)[0] == [("john", "john")]


def test_a_folder_of_modules_is_one_submission_with_a_note(tmp_path):
    root = files(tmp_path / "bob", "masks.py", "heads.py", "notes.txt")
    found, notes = split(root, tmp_path)
    assert found == [("bob", "bob")]
    assert notes == [f"{root}: 2 modules and no notebook (heads.py, masks.py), graded as one student's code; for a "
                     f"module per student, give each as a PATH of its own (`grade {root}/*.py`)"]
    linked = files(tmp_path / "carol", "masks.py")
    (linked / "heads.py").symlink_to(root / "heads.py")  # refused when read: no module to count
    assert split(linked, tmp_path) == ([("carol", "carol")], [])


# -------------------------------------------------------------- links and bounds


def test_links_are_never_followed(tmp_path):
    elsewhere = files(tmp_path / "elsewhere", "alice/attention.ipynb", "bob/attention.ipynb")
    root = files(tmp_path / "class", "carol/attention.ipynb", "dave/attention.ipynb")
    (root / "eve.zip").symlink_to(tmp_path / "elsewhere.zip")
    (root / "others").symlink_to(elsewhere)
    found, _ = split(root, tmp_path)
    assert found == [("class/carol", "carol"), ("class/dave", "dave"), ("class/eve.zip", "eve")]  # eve: refused there
    only_a_link = tmp_path / "linked"
    only_a_link.mkdir()
    (only_a_link / "class").symlink_to(elsewhere)
    assert split(only_a_link, tmp_path)[0] == [("linked", "linked")]


def test_a_folder_with_too_many_entries_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(students, "MAX_ENTRIES", 3)
    root = files(tmp_path / "class", "a/x.py", "b/x.py", "c/x.py", "d/x.py")
    with pytest.raises(LayoutError, match="more than 3 entries"):
        held_by(root, Staging())


def test_work_beyond_the_depth_and_entry_limits_is_not_looked_for(tmp_path, monkeypatch):
    monkeypatch.setattr(students, "MAX_DEPTH", 2)
    monkeypatch.setattr(students, "MAX_FILES", 5)
    root = files(tmp_path / "class", "alice/attention.ipynb", "bob/1/2/3/4/attention.ipynb",
                 *(f"carol/{i}.txt" for i in range(10)), "carol/zz.py", "dave/attention.ipynb")
    found, _ = split(root, tmp_path)
    assert [sid for _, sid in found] == ["alice", "bob", "carol", "dave"]
    assert not students._holds_work(root / "bob", [5], 0) and not students._holds_work(root / "carol", [5], 0)
