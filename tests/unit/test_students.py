"""Which students a PATH holds (model/students.py): the split rules on small trees and zips, no grading.

A class folder, a folder of zips and each LMS's bulk-download names give one (path, id) per student,
the files of one student together, each file given to a student only by what the LMS's names
guarantee; every entry that is no one's row is a note, never another student's grade and never the
class's refusal; a folder of student folders that holds work of its own is refused with what was
found; one student's folder is still one submission; no pattern reads a name longer than a file's.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path, PurePosixPath

import pytest

from autograder.model import students
from autograder.model.students import LayoutError, Staging, held_by
from autograder.model.submission import read_submission


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
    assert notes == [f"{root}: 3 students (a folder or zip per student), each graded as a submission of its own",
                     f"{root}: not graded, as no student's and holding no notebook, module or zip: grades.csv"]


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


# -------------------------------------------------------------- whose file it is, by what the LMS guarantees


def test_a_canvas_name_ending_in_digits_never_makes_one_students_file_anothers(tmp_path):
    """User 67890 may name themselves `smith_12345`: their file `smith_12345_67890_111_...` also reads as user
    12345's (named `smith`). User 12345's own file names them `leeann`, and Canvas gives a user one name in a
    download: each file is its own user's, and a note says how that was decided."""
    root = files(tmp_path / "canvas", "smith_12345_67890_111_attention.ipynb", "leeann_12345_222_attention.ipynb")
    found, notes = split(root, tmp_path)
    assert found == [("staged:leeann_12345_222_attention.ipynb", "12345"),
                     ("staged:smith_12345_67890_111_attention.ipynb", "67890")]
    assert notes[1:] == [f"smith_12345_67890_111_attention.ipynb in {root}: its name reads as user 12345 (named smith) "
                         "or user 67890 (named smith_12345); graded as user 67890's: user 12345's other files have "
                         "them named leeann"]


def test_a_canvas_name_two_users_could_have_is_a_note_never_a_grade(tmp_path):
    """Named to mirror another user (`leeann_12345`, beside user 12345 `leeann`), or with nothing to weigh it
    by: the file is no one's row, and the note names both users and how to grade it."""
    root = files(tmp_path / "canvas", "leeann_12345_67890_111_attention.ipynb", "leeann_12345_222_attention.ipynb",
                 "nguyen_45678_333_attention.ipynb", "lee_1_55555_444_attention.ipynb")
    found, notes = split(root, tmp_path)
    assert found == [("staged:leeann_12345_222_attention.ipynb", "12345"),
                     ("staged:nguyen_45678_333_attention.ipynb", "45678")]
    assert notes[1:] == [
        f"lee_1_55555_444_attention.ipynb in {root}: its name reads as user 1 (named lee) or user 55555 (named "
        f"lee_1) (a Canvas name may end in `_<digits>`), so whose it is would be a guess: not graded; grade it as a "
        f"PATH of its own: `grade {root}/lee_1_55555_444_attention.ipynb`",
        f"leeann_12345_67890_111_attention.ipynb in {root}: its name reads as user 12345 (named leeann) or user "
        f"67890 (named leeann_12345) (a Canvas name may end in `_<digits>`), so whose it is would be a guess: not "
        f"graded; grade it as a PATH of its own: `grade {root}/leeann_12345_67890_111_attention.ipynb`"]


def test_canvas_readings_are_weighed_only_by_what_canvas_guarantees(tmp_path):
    """`late` in a name: one user either way. A display name that starts `<digits>_<digits>_` makes its file
    read as users named `smith_23456` and `smith_23456_683` too, and nothing contradicts them: a note, not a
    guess. An anonymous id of digits
    reads as a named user's too; the download's other files are anonymous, so it is anonymous."""
    root = files(tmp_path / "canvas", "obrien_late_34567_681_solution.py", "obrien_late_34567_682_quiz.ipynb",
                 "smith_23456_683_2024_10_attention.ipynb", "smith_23456_684_quiz.ipynb")
    found, notes = split(root, tmp_path)
    assert found == [("staged:smith_23456_684_quiz.ipynb", "23456"),
                     ("staged:obrien_late_34567_681_solution.py,obrien_late_34567_682_quiz.ipynb", "34567")]
    assert notes[1].startswith(f"smith_23456_683_2024_10_attention.ipynb in {root}: its name reads as user 23456 "
                               "(named smith) or user 683 (named smith_23456) or user 2024 (named smith_23456_683) "
                               "(a Canvas name may end in `_<digits>`), so whose it is would be a guess: not graded")
    anonymous = files(tmp_path / "anonymous", "anon_12345_683_attention.ipynb", "anon_x9Kq2_684_attention.ipynb")
    found, notes = split(anonymous, tmp_path)
    assert [sid for _, sid in found] == ["anon_12345", "anon_x9Kq2"]
    assert notes[1] == (f"anon_12345_683_attention.ipynb in {anonymous}: its name reads as user anon_12345 (anonymous) "
                        "or user 12345 (named anon); graded as user anon_12345's: the download's other files are "
                        "anonymous")


def test_a_canvas_upload_named_like_a_blackboard_attempt_is_read_as_canvas(tmp_path):
    """A display name holding `_attempt_<time>_` reads as Blackboard's too; Canvas reads every entry, so the
    folder is Canvas's. A Blackboard download whose assignment reads as Canvas (`Lab_2_3`) stays Blackboard's."""
    canvas = files(tmp_path / "canvas", "smithjohn_12345_678_attention.ipynb", "nguyen_45678_681_attention.ipynb",
                   "leeann_23456_680_hw_attempt_2024-01-01-12-00-00_attention.ipynb")
    found, notes = split(canvas, tmp_path)
    assert [sid for _, sid in found] == ["12345", "23456", "45678"] and len(notes) == 1
    assert "3 students (Canvas bulk-download names)" in notes[0]
    board = files(tmp_path / "bb", "Lab_2_3_jdoe_attempt_2024-01-02-09-30-00_attention.ipynb",
                  "Lab_2_3_jdoe_attempt_2024-01-02-09-30-00.txt", "Lab_2_3_asmith_attempt_2024-01-01-08-00-00.txt",
                  "Lab_2_3_asmith_attempt_2024-01-01-08-00-00_attention.ipynb")
    assert [sid for _, sid in split(board, tmp_path)[0]] == ["asmith", "jdoe"]


def test_a_moodle_folder_that_is_a_link_is_its_students_row_never_followed(tmp_path):
    elsewhere = files(tmp_path / "elsewhere", "attention.ipynb")
    root = files(tmp_path / "moodle", "Ann Lee_101_assignsubmission_file/attention.ipynb",
                 "Cy Dee_103_assignsubmission_file/attention.ipynb")
    (root / "Bo Chen_102_assignsubmission_file").symlink_to(elsewhere)
    staged = {sid: path for path, sid in held_by(root, Staging()).students}
    assert sorted(staged) == ["Ann Lee_101", "Bo Chen_102", "Cy Dee_103"]
    bo = read_submission(staged["Bo Chen_102"], "Bo Chen_102")
    assert bo.problems[0] == ("Bo Chen_102_assignsubmission_file is a symbolic link: links are never followed, "
                              "so it was not read") and not bo.cells


def test_a_student_with_a_folder_and_other_files_is_graded_from_the_folder_with_a_note(tmp_path):
    root = files(tmp_path / "moodle", "Ann Lee_101_assignsubmission_file/attention.ipynb",
                 "Ann Lee_101_assignsubmission_file_quiz.ipynb", "Bo Chen_102_assignsubmission_file/solution.py")
    found, notes = split(root, tmp_path)
    assert found == [("moodle/Ann Lee_101_assignsubmission_file", "Ann Lee_101"),
                     ("moodle/Bo Chen_102_assignsubmission_file", "Bo Chen_102")]
    assert notes[-1] == (f"Ann Lee_101 in {root} has a folder and other files: graded from Ann "
                         "Lee_101_assignsubmission_file/, not from Ann Lee_101_assignsubmission_file_quiz.ipynb; to "
                         "grade them together, put them in one folder and give it as a PATH of its own")


# -------------------------------------------------------------- a guess: refused


def test_an_entry_named_unlike_the_rest_is_a_note_never_the_class(tmp_path):
    """Canvas's names read the most entries: a folder and a notebook beside them are notes, not graded."""
    root = files(tmp_path / "mixed", "smithjohn_12345_678_attention.ipynb", "leeann_23456_680_attention.ipynb",
                 "alice/attention.ipynb", "attention.ipynb", "grades.csv")
    found, notes = split(root, tmp_path)
    assert found == [("staged:smithjohn_12345_678_attention.ipynb", "12345"),
                     ("staged:leeann_23456_680_attention.ipynb", "23456")]
    assert notes == [
        f"{root}: 2 students (Canvas bulk-download names), each graded as a submission of its own",
        f"alice/ in {root}: named as a folder or zip per student, unlike the rest (Canvas bulk-download names), so "
        f"whose it is would be a guess: not graded; grade it as a PATH of its own: `grade {root}/alice/`",
        f"attention.ipynb in {root}: its name gives it to no student, so whose it is would be a guess: not graded; "
        f"grade it as a PATH of its own: `grade {root}/attention.ipynb`",
        f"{root}: not graded, as no student's and holding no notebook, module or zip: grades.csv"]


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
    found, notes = split(root, tmp_path)
    assert found == [("class/carol", "carol"), ("class/dave", "dave"), ("class/eve.zip", "eve")]  # eve: refused there
    assert notes[1:] == [f"others in {root}: a symbolic link, never followed: not graded"]
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


def test_no_pattern_reads_a_name_longer_than_a_file_may_have(tmp_path, monkeypatch):
    """Zip members may be named with 65,000 characters: no name pattern ever sees one (each once backtracked
    for seconds), and a zip given as a PATH is looked into without them."""
    import re

    seen = []

    class Spy:
        def __init__(self, pattern):
            self.pattern = pattern

        def __getattr__(self, method):
            def call(text, *args):
                seen.append(len(text))
                return getattr(self.pattern, method)(text, *args)
            return call

    for name, value in vars(students).items():
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(students, name, Spy(value))
    long = "1_" * 32_500 + "\nx.ipynb"
    assert students._zip_lister([(long, False), ("alice/attention.ipynb", False)])(PurePosixPath()) == [
        students.Entry(PurePosixPath("alice"), students.FOLDER, True)]
    split(files(tmp_path / "class", "alice/attention.ipynb", "bob/attention.ipynb", long[-250:]), tmp_path)
    assert seen and max(seen) <= students.MAX_NAME_CHARS


@pytest.mark.parametrize("name", ["1_" * 32_500 + "\nx", "a_" * 32_500 + "attempt_2024-01-01-12-00-00\nx",
                                  "x_1_assignsubmission_" * 3_000 + "\nx", "_" * 65_000 + "\n", "anon_" * 13_000 + "1_"])
def test_name_patterns_read_a_name_in_one_pass(name):
    """Each pattern, even on a name far over the bound (Canvas's once took 8 s on the first): no quantifier
    can give back what the next one takes, so each reads a name in about a millisecond."""
    import time

    started = time.thread_time()  # the CPU it takes: a busy machine's wait is not the pattern's
    students.ATTEMPT.search(name)
    students.MOODLE_FILE.fullmatch(name)
    students.MOODLE_FOLDER.fullmatch(name)
    students.CANVAS_ANONYMOUS.match(name)
    at = name.find("_")
    while at >= 0:  # as _canvas_readings tries each `_` that may end a user's name
        students.CANVAS_IDS.match(name, at + 1)
        at = name.find("_", at + 1)
    assert time.thread_time() - started < 0.5, "a pattern backtracks"
