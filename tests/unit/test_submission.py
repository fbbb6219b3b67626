"""Reading submissions: files are data, nothing a student chose makes the grader follow, wait or choke."""

from __future__ import annotations

import ast
import json
import math
import os
from pathlib import Path

import pytest

from autograder import assignment
from autograder.model.submission import (MAX_PY_BYTES, Submission, SubmissionError, read_submission, release_cells,
                                        setup_imports)

RELEASE = assignment.release_folder()


def notebook(path: Path, answers: dict[str, str], extra: list[dict] = ()) -> Path:
    """The released attention notebook with `answers` typed into its answer cells."""
    nb = json.loads((RELEASE / "attention.ipynb").read_text())
    for cell in nb["cells"]:
        grade_id = assignment.nbgrader_metadata(cell).get("grade_id")
        if assignment.is_answer_cell(cell) and grade_id in answers:
            cell["source"] = answers[grade_id]
    nb["cells"] += list(extra)
    path.write_text(json.dumps(nb))
    return path


def test_a_module_is_every_notebook(tmp_path):
    (tmp_path / "sub.py").write_text("x = 1\n")
    sub = read_submission(tmp_path / "sub.py")
    assert sub.id == "sub" and set(sub.cells) == set(assignment.NOTEBOOKS)
    assert sub.cells["attention"] == [("sub.py", "x = 1\n")] and not sub.problems


def test_a_notebook_gives_the_release_setup_cells_and_its_answer_cells(tmp_path):
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {"masks-causal_mask": "def causal_mask(T): pass"}))
    labels = [label for label, _ in sub.cells["attention"]]
    assert labels[0].endswith("cell setup")
    answer_ids = [g for g, _, is_answer in release_cells("attention") if is_answer]
    assert len(labels) == 1 + len(answer_ids)
    assert ("attention.ipynb, cell masks-causal_mask", "def causal_mask(T): pass") in sub.cells["attention"]


def test_code_outside_answer_cells_never_runs(tmp_path):
    sneaky = [{"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "setup", "solution": False}},
               "source": "import os; os._exit(1)", "outputs": [], "execution_count": None},
              {"cell_type": "code", "metadata": {}, "source": "print('plot')", "outputs": [], "execution_count": None}]
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {}, sneaky))
    assert not any("os._exit" in code or "print('plot')" in code for _, code in sub.cells["attention"])


def test_missing_and_repeated_answer_cells_are_noted_as_they_run(tmp_path):
    """Issue 53, item 11: an answer cell held twice (Jupyter's split copies a cell's metadata into both halves)
    was noted "appears 2 times; the last is graded" although both ran; what happened is said instead."""
    nb = json.loads((RELEASE / "attention.ipynb").read_text())
    answers = [c for c in nb["cells"] if assignment.is_answer_cell(c)]
    nb["cells"].remove(answers[0])
    nb["cells"].append(dict(answers[1], source="def causal_mask(T):\n    return 'second copy'\n"))
    split = nb["cells"].index(answers[2])
    nb["cells"][split:split + 1] = [dict(answers[2], source="def _helper(x):\n    return x\n"),
                                    dict(answers[2], source="def padding_mask(lengths, T):\n    return _helper(T)\n")]
    (tmp_path / "attention.ipynb").write_text(json.dumps(nb))
    sub = read_submission(tmp_path / "attention.ipynb")
    assert "attention.ipynb: answer cell masks-causal_average is missing: no cell defines `causal_average`" in sub.problems
    copied, halves = len(nb["cells"]), split + 1
    assert sub.notes == [
        f"attention.ipynb: answer cell masks-causal_mask appears in 2 cells (cells {split - 2} and {copied}); all of them "
        "run, in the notebook's order, and `causal_mask` is defined in more than one: the last definition is graded, "
        "as after Restart & Run All",
        f"attention.ipynb: answer cell masks-padding_mask appears in 2 cells (cells {halves} and {halves + 1}); all of "
        "them run, in the notebook's order"]
    runs = [code for label, code in sub.cells["attention"] if label.endswith("masks-causal_mask")]
    assert len(runs) == 2 and "second copy" in runs[-1]  # both run, in the notebook's order: the last one counts


def test_a_notebook_without_nbgrader_metadata_finds_its_answers_by_what_they_define(tmp_path, monkeypatch):
    """Issue 53, item 11: a notebook of the student's own (no nbgrader metadata) got full marks and a note that
    every answer cell was missing. A cell is found by the names its answer cell defines, and is graded as an
    added cell is: a quiz answer assigned in it (`answer_q01 = "b"`) runs, as graded code reads it."""
    nb = json.loads((RELEASE / "attention.ipynb").read_text())
    for cell in nb["cells"]:
        cell["metadata"].pop("nbgrader", None)
    nb["cells"] = [c for c in nb["cells"] if "causal_average" not in "".join(c["source"]) or c["cell_type"] != "code"]
    (tmp_path / "attention.ipynb").write_text(json.dumps(nb))
    sub = read_submission(tmp_path / "attention.ipynb")
    answers = [g for g, _, is_answer in release_cells("attention") if is_answer]
    assert sub.problems == ["attention.ipynb: answer cell masks-causal_average is missing: no cell defines "
                            "`causal_average`"]
    assert sub.notes == [f"attention.ipynb: {len(answers) - 1} answer cells found by the names they define "
                         "(`causal_mask`, `padding_mask`, `apply_mask`, `combine_masks`, `attention_scores`, "
                         f"`attention_weights` and {len(answers) - 7} more), not by nbgrader's metadata; graded as "
                         "cells you add are: their definitions run, and the values those use"]
    quiz = json.loads((RELEASE / "quiz.ipynb").read_text())
    for cell in quiz["cells"]:
        if assignment.nbgrader_metadata(cell).get("grade_id") == "quiz-q01":
            cell["source"] = 'answer_q01 = "b"\nprint("my answer")\n'
        cell["metadata"].pop("nbgrader", None)
    (tmp_path / "quiz.ipynb").write_text(json.dumps(quiz))
    sub = read_submission(tmp_path / "quiz.ipynb")
    assert not any("q01" in p for p in sub.problems), sub.problems
    namespace = _run(sub.cells["quiz"], monkeypatch)
    assert namespace["answer_q01"] == "b" and namespace["answer_q02"] is None


def test_links_are_refused_and_never_read(tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text("SECRET_ANSWER = 42\n")
    folder = tmp_path / "student"
    folder.mkdir()
    (folder / "work.py").symlink_to(secret)
    (folder / "inner").mkdir()
    (folder / "inner" / "quiz.ipynb").symlink_to(secret)
    sub = read_submission(folder)
    assert "SECRET_ANSWER" not in json.dumps(sub.to_json())
    assert sum("symbolic link" in p for p in sub.problems) == 2
    link = tmp_path / "link.py"
    link.symlink_to(secret)
    assert "SECRET_ANSWER" not in json.dumps(read_submission(link).to_json())


def test_a_pipe_is_refused_without_waiting_on_it(tmp_path):
    folder = tmp_path / "student"
    folder.mkdir()
    os.mkfifo(folder / "attention.ipynb")
    (folder / "answers.py").write_text("y = 2\n")
    sub = read_submission(folder)  # would block forever if the pipe were opened for reading
    assert any("not a regular file" in p for p in sub.problems)


def test_too_large_and_unreadable_files_are_noted(tmp_path):
    (tmp_path / "big.py").write_text("#" * (MAX_PY_BYTES + 1))
    assert "over the limit" in read_submission(tmp_path / "big.py").problems[0]
    deep = "[" * 100_000 + "]" * 100_000  # json's recursion limit: the reader must not crash on it
    (tmp_path / "attention.ipynb").write_text(deep)
    assert read_submission(tmp_path / "attention.ipynb").problems == ["attention.ipynb could not be read: nested too deeply"]


def test_control_characters_in_what_a_student_named_are_escaped(tmp_path):
    nb = json.loads((RELEASE / "attention.ipynb").read_text())
    twin = next(c for c in nb["cells"] if assignment.is_answer_cell(c))
    evil = "masks\n\x1b[31mall passed"
    nb["cells"] += [dict(twin, metadata={"nbgrader": {"grade_id": evil, "solution": True, "grade": False}}),
                    dict(twin, metadata={"nbgrader": {"grade_id": evil, "solution": True, "grade": False}})]
    (tmp_path / "attention.ipynb").write_text(json.dumps(nb))
    problems = " ".join(read_submission(tmp_path / "attention.ipynb").problems)
    assert "\x1b" not in problems and "\n" not in problems and "\\x1b" in problems
    assert "which the assignment does not have; it does not run" in problems


def test_a_submission_is_plain_json_data(tmp_path):
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {}))
    assert Submission.from_json(json.loads(json.dumps(sub.to_json()))) == sub


def test_what_is_not_a_submission_is_an_error(tmp_path):
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(SubmissionError):
        read_submission(tmp_path / "notes.txt")
    with pytest.raises(SubmissionError):
        read_submission(tmp_path / "absent.py")


def test_the_zygote_preloads_what_the_setup_cells_import():
    assert {"torch", "matplotlib.pyplot", "selfcheck", "quizcheck"} <= set(setup_imports())


def test_what_graded_code_needs_of_cells_the_student_added_runs_as_the_notebook_says(tmp_path, monkeypatch):
    """Of a cell the student added, definitions and imports run, and every assignment graded code reads,
    whatever it computes (`NEG_INF = float("-inf")`, `T_MAX = 2 ** 14`, `HALF_PI = math.pi / 2`: once, only
    literals ran, and a default that used one cost its function and every definition after it); a plot, a
    print, an experiment whose result nothing graded reads, are blanked, lines kept. The cells run in the
    notebook's order, so a later copy of a function is the one Restart & Run All leaves, and graded."""
    helper = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source":
              "import math\nNEG_INF = float('-inf')\nT_MAX = 2 ** 14\nHALF_PI = math.pi / 2\n"
              "UNUSED = 2 ** 10\n\ndef _rowavg(T, limit=T_MAX):\n    return T + HALF_PI\n\n"
              "print('exploring')\nresult = _rowavg(3)\nimport os; os._exit(1)\n"}
    again = {**helper, "source": "def causal_average(T):\n    return 'the later copy'\n"}
    nb = json.loads((RELEASE / "attention.ipynb").read_text())
    first_answer = next(i for i, c in enumerate(nb["cells"]) if assignment.is_answer_cell(c))
    nb["cells"][first_answer:first_answer] = [helper]
    for cell in nb["cells"]:
        if assignment.nbgrader_metadata(cell).get("grade_id") == "masks-causal_average":
            cell["source"] = "def causal_average(T, fill=NEG_INF):\n    return _rowavg(T)\n"
    path = tmp_path / "attention.ipynb"
    path.write_text(json.dumps(nb))
    cells = read_submission(path).cells["attention"]
    monkeypatch.syspath_prepend(str(RELEASE))  # the setup cell imports the released helpers
    added = next(code for label, code in cells if "your cell" in label)
    for kept in ("import math", "NEG_INF = float('-inf')", "T_MAX = 2 ** 14", "HALF_PI = math.pi / 2", "def _rowavg"):
        assert kept in added, kept
    for blanked in ("UNUSED", "print", "result =", "_exit"):
        assert blanked not in added, blanked
    assert added.count("\n") == helper["source"].count("\n")  # line numbers kept for tracebacks
    namespace: dict = {}
    for _, code in cells:  # the setup cell, then the notebook's cells in its order
        exec(compile(code, "cell", "exec"), namespace)
    assert namespace["causal_average"](4) == 4 + math.pi / 2  # the answer cell's, through the helper and its constant
    nb["cells"].append(again)
    path.write_text(json.dumps(nb))
    namespace = {}
    for _, code in read_submission(path).cells["attention"]:
        exec(compile(code, "cell", "exec"), namespace)
    assert namespace["causal_average"](4) == "the later copy"  # as Restart & Run All leaves it


def test_what_runs_is_found_in_time_linear_in_the_code(walks_per_size):
    """50,000 assignments that each read the one before: every statement is looked at once."""
    from autograder.model import submission

    def what_runs(n: int) -> None:
        chain = "x0 = 1\n" + "".join(f"x{i} = x{i - 1} + 1\n" for i in range(1, n))
        answer = f"def f():\n    return x{n - 1}\n"
        cells = [submission._Cell("added", chain, 1, None, ast.parse(chain).body),
                 submission._Cell("answer", answer, 2, "f", ast.parse(answer).body)]
        assert submission._what_runs(cells)[0][1].count("=") == n

    work = walks_per_size(what_runs, (10_000, 20_000))
    assert 0 < work[20_000] <= 2.2 * work[10_000], work


@pytest.mark.parametrize("name, notebook", [("Attention", "attention"), ("quiz (1)", "quiz"), ("attention-1", "attention"),
                                            ("smithjohn_12345_678_attention", "attention"),
                                            ("Ann Lee_123_assignsubmission_file_quiz", "quiz"), ("attention copy", "attention"),
                                            ("notes", None), ("myattention", None)])
def test_notebooks_are_found_as_students_and_lms_name_them(name, notebook):
    from autograder.model.submission import notebook_named

    assert notebook_named(name) == notebook


def test_a_folder_says_which_file_it_read_and_what_is_missing(tmp_path):
    folder = tmp_path / "cleo"
    folder.mkdir()
    notebook(folder / "Attention (2).ipynb", {})
    (folder / "scratch.ipynb").write_text("{}")
    sub = read_submission(folder)
    assert set(sub.cells) == {"attention"}
    assert sub.notes == ["attention.ipynb read from Attention (2).ipynb"]
    assert sub.problems == ["no quiz.ipynb found (its part quiz score 0)"]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "report.pdf.ipynb").write_text("{}")
    assert "found: report.pdf.ipynb" in read_submission(empty).problems[0]


def test_a_zip_upload_is_read_in_memory_and_nothing_in_it_is_followed(tmp_path):
    import stat as st
    import zipfile

    notebook(tmp_path / "attention.ipynb", {})
    archive = tmp_path / "upload" / "work.zip"
    archive.parent.mkdir()
    with zipfile.ZipFile(archive, "w") as z:
        z.write(tmp_path / "attention.ipynb", "homework/Attention.ipynb")
        link = zipfile.ZipInfo("quiz.ipynb")
        link.external_attr = (st.S_IFLNK | 0o777) << 16
        z.writestr(link, "/etc/shadow")
        z.writestr("../../escape.py", "x = 1\n")
        z.writestr("__MACOSX/._attention.ipynb", "junk")
    sub = read_submission(archive.parent)
    assert "attention" in sub.cells and sub.notes == ["attention.ipynb read from work.zip/homework/Attention.ipynb"]
    assert any("quiz.ipynb is a symbolic link" in p for p in sub.problems)
    assert not (tmp_path / "escape.py").exists() and not (tmp_path.parent / "escape.py").exists()
    direct = read_submission(archive)  # the zip itself as the PATH
    assert "attention" in direct.cells


def test_a_zip_member_larger_than_its_header_says_is_refused(tmp_path):
    import zipfile

    from autograder.model.submission import File, _read_member

    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("attention.py", "#" * 5_000_000)
    book = zipfile.ZipFile(archive)
    member = book.infolist()[0]
    member.file_size = 10  # as a forged header would say: refused whatever is found out first
    assert _read_member(book, member, 1000).endswith("so it was not read")
    assert isinstance(File("a", "a.py", 0.0, lambda limit: b"").read(1), bytes)


def test_a_notebook_of_any_shape_is_read_or_refused_never_raised_on(tmp_path):
    """What a student's JSON holds where text is expected (a number in a cell's source, a list for its
    metadata, a number for a grade_id) costs that cell, with a note, never the run; a notebook of a
    million empty objects is refused before it is parsed."""
    odd = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": ["x = 1\n", 5]},
           {"cell_type": "code", "metadata": ["nbgrader"], "outputs": [], "source": "def _h():\n    return 1\n"},
           {"cell_type": "code", "metadata": {"nbgrader": "solution"}, "outputs": [], "source": "def _g(): pass\n"},
           {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": 7, "solution": True}}, "source": "y = 2\n"},
           {"cell_type": "markdown", "metadata": {}, "source": {"not": "text"}}, 5, None, ["a"]]
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {"masks-causal_mask": "def causal_mask(T): pass"}, odd))
    assert [p for p in sub.problems if "not text" in p] == [
        f"attention.ipynb: cell {len(json.loads((RELEASE / 'attention.ipynb').read_text())['cells']) + 1}'s source "
        "is not text, so it was not read"]
    added = "\n".join(code for label, code in sub.cells["attention"] if "your cell" in label)
    assert "def _h" in added and "def _g" in added  # metadata that is not nbgrader's: a cell of the student's
    assert "y = 2" not in added  # nbgrader's metadata without a usable grade_id: neither added nor an answer
    assert ("attention.ipynb, cell masks-causal_mask", "def causal_mask(T): pass") in sub.cells["attention"]
    (tmp_path / "many.ipynb").write_text('{"cells": [' + ",".join(["{}"] * 1_000_001) + "]}")
    assert "more than 1,000,000 JSON objects" in read_submission(tmp_path / "many.ipynb").problems[0]


def test_a_helper_keeps_its_lines_whatever_line_breaks_its_comments_hold(tmp_path):
    """U+2028 and a form feed end a line for str.splitlines, not for Python: a helper whose comment holds one
    was cut in two and lost."""
    helper = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "def _helper(T):  # a note\u2028that goes on\x0c\n    return T\n\nprint(_helper(2))\n"}
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {}, [helper]))
    added = next(code for label, code in sub.cells["attention"] if "your cell" in label)
    namespace: dict = {}
    exec(compile(added, "cell", "exec"), namespace)
    assert namespace["_helper"](3) == 3 and "print" not in added


def test_a_constant_is_never_evaluated_by_the_grader(tmp_path, monkeypatch):
    """A set of integers that hash alike takes seconds to build: what a cell the student added computes runs
    in the sandbox (bounded there like any code), never in the grader, which reads only its syntax."""
    monkeypatch.setattr("ast.literal_eval", lambda *a: (_ for _ in ()).throw(AssertionError("evaluated")))
    constant = "_TABLE = {" + ", ".join(str(k * (2**61 - 1)) for k in range(1, 100)) + "}\n"
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": constant}
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {"masks-causal_mask": "def causal_mask(T):\n"
                                                                                      "    return len(_TABLE)\n"}, [cell]))
    assert any(code.startswith("_TABLE = {") for label, code in sub.cells["attention"] if "your cell" in label)
def test_a_submission_holds_at_most_so_much_code_wherever_it_is(tmp_path):
    """Four modules just under the limit, zipped into a few kilobytes: the first is read, the rest refused
    before anything parses them (the grader's scans read every byte of what is read)."""
    import io
    import zipfile

    from autograder.model.submission import MAX_CODE_BYTES

    module = "x = 1\n" * ((MAX_CODE_BYTES - 100) // 6)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(4):
            z.writestr(f"part{i}.py", module)
    assert len(archive.getvalue()) < 10_000
    (tmp_path / "upload.zip").write_bytes(archive.getvalue())
    sub = read_submission(tmp_path / "upload.zip")
    assert sub.cells["attention"] == [("part0.py", module)]
    assert len([p for p in sub.problems if "over the limit of 262,144 for a submission" in p]) == 3, sub.problems
    big = "def causal_mask(T):\n" + "    x = 1\n" * (MAX_CODE_BYTES // 10)
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {"masks-causal_mask": big}))
    assert sub.cells["attention"] == [] and "over the limit" in sub.problems[-1]


def test_a_notebooks_code_is_charged_before_anything_parses_it(tmp_path, monkeypatch):
    """Scratch code in cells the student added counts too: 100 MiB of it would otherwise be parsed (seconds
    and gigabytes in the grader's own process) before the limit refused it."""
    from autograder.model import submission

    parsed = []
    real = submission.ast.parse
    monkeypatch.setattr(submission.ast, "parse", lambda code, *a, **k: parsed.append(len(code)) or real(code, *a, **k))
    path = notebook(tmp_path / "attention.ipynb", {})
    nb = json.loads(path.read_text())
    nb["cells"].append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                        "source": "y = 2\n" * (submission.MAX_CODE_BYTES // 6 + 1)})
    path.write_text(json.dumps(nb))
    sub = read_submission(path)
    assert sub.cells["attention"] == [] and "over the limit" in sub.problems[-1]
    assert not any(size > submission.MAX_CODE_BYTES for size in parsed), parsed


# ---- reading is bounded before it starts (issue 53) ----------------------------------------------------------


def test_notebook_json_is_refused_before_it_is_parsed_by_what_parsing_it_would_cost(monkeypatch):
    """Two million short strings, numbers or nulls cost the parse an object or a slot each (a 128 MiB notebook
    of them, gigabytes): refused by their count; numbers as they are parsed. A character Python holds in 2 or
    4 bytes (or its `\\u` escape) makes every character cost that much."""
    from autograder.model import submission
    from autograder.model.submission import parse_notebook

    def many(value: str, n: int = 2_000_001) -> bytes:
        return ('{"cells": [], "metadata": {"x": [' + ",".join([value] * n) + "]}}").encode()

    too_many = "more than 2,000,000 JSON values (strings, numbers, true, false and null)"
    assert parse_notebook(many('"ab"')) == too_many
    assert parse_notebook(many("null")) == too_many
    assert parse_notebook(many("1.5")) == too_many  # counted while it is parsed: no byte count tells a number
    assert parse_notebook(many("7", 1_999_990))["metadata"]["x"][-1] == 7
    assert isinstance(parse_notebook((RELEASE / "attention.ipynb").read_bytes()), dict)
    monkeypatch.setattr(submission, "MAX_NOTEBOOK_BYTES", 1_000)
    text = '{"cells": [], "metadata": {"x": "%s"}}'
    assert isinstance(parse_notebook((text % ("é" * 200)).encode()), dict)  # Latin-1: a byte a character
    for wide, width in (("😀", 4), ("\\ud83d\\ude00", 4), ("—", 2), ("\\u2014", 2)):
        assert parse_notebook((text % (wide + "a" * 600)).encode()) == (
            f"characters Python holds in {width} bytes each: its text would take more than 1,000 bytes"), wide


def test_a_zipped_notebook_is_refused_while_it_is_read_never_held_whole(tmp_path):
    """A small zip holding a notebook of four million short strings (once parsed whole in the grader's own
    process: gigabytes for a 128 MiB one): read a chunk at a time and refused at the chunk that goes over."""
    import tracemalloc
    import zipfile

    body = '{"cells": [], "metadata": {"x": [' + '"ab",' * 4_000_000 + '"ab"]}}'
    with zipfile.ZipFile(tmp_path / "eve.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("attention.ipynb", body)
    del body
    assert (tmp_path / "eve.zip").stat().st_size < 200_000
    tracemalloc.start()
    try:
        sub = read_submission(tmp_path / "eve.zip")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sub.problems[0] == ("eve.zip/attention.ipynb holds more than 2,000,000 JSON values (strings, numbers, true, "
                               "false and null), so it was not read")
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MiB held while reading a 20 MiB notebook"


def _zip_of(path: Path, listed: int, entries: int | None = None, zip64: bool = False) -> Path:
    """A zip whose directory holds `entries` entries (`listed` unless given) of one member, `a`, whose end
    record says it lists `listed` (ZIP64's record too with `zip64`): what the central directory may claim."""
    import struct
    import zipfile

    entries = listed if entries is None else entries
    name = b"a"
    local = struct.pack(zipfile.structFileHeader, zipfile.stringFileHeader, 20, 0, 0, 0, 0, 0, 0, 0, 0, len(name), 0)
    entry = struct.pack(zipfile.structCentralDir, zipfile.stringCentralDir, 20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0,
                        len(name), 0, 0, 0, 0, 0, 0) + name
    size = len(entry) * entries
    with open(path, "wb") as fh:
        fh.write(local + name + entry * entries)
        if zip64:
            fh.write(struct.pack(zipfile.structEndArchive64, zipfile.stringEndArchive64, 44, 45, 45, 0, 0, listed,
                                 listed, size, len(local) + 1))
            fh.write(struct.pack(zipfile.structEndArchive64Locator, zipfile.stringEndArchive64Locator, 0,
                                 len(local) + 1 + size, 1))
            listed, size = 0xFFFF, 0xFFFFFFFF
        fh.write(struct.pack(zipfile.structEndArchive, zipfile.stringEndArchive, 0, 0, min(listed, 0xFFFF),
                             min(listed, 0xFFFF), size, len(local) + 1, 0))
    return path


def test_a_zip_is_refused_from_its_end_record_before_it_is_listed(tmp_path, monkeypatch):
    """A directory of 1.4 million members was listed twice (30 s, 1 GiB of the grader's memory) before the
    member limit applied: its end record (ZIP64's, where there is one) says how many members and how large a
    directory zipfile would list, so it is refused unlisted; an end record that understates them is caught by
    the directory's size."""
    import zipfile

    from autograder.model import submission

    listed = []
    real = zipfile.ZipFile
    monkeypatch.setattr(submission.zipfile, "ZipFile", lambda *a, **k: listed.append(a) or real(*a, **k))
    cases = {"many.zip": ({"listed": 20_000}, "lists 20,000 members, over the limit of 10,000"),
             "zip64.zip": ({"listed": 1_400_000, "entries": 10, "zip64": True},
                           "lists 1,400,000 members, over the limit of 10,000"),
             "understated.zip": ({"listed": 1, "entries": 50_000},
                                 "has a directory of 2,350,000 bytes, over the limit of 2,097,152")}
    for name, (shape, why) in cases.items():
        sub = read_submission(_zip_of(tmp_path / name, **shape))
        assert sub.problems[0] == f"{name} {why}, so it was not read", sub.problems
    assert not listed
    honest = _zip_of(tmp_path / "honest.zip", 5_000)
    assert "no attention.ipynb" in read_submission(honest).problems[0] and len(listed) == 1  # listed once


def test_the_end_record_is_found_as_zipfile_finds_it(tmp_path):
    """With a comment, with ZIP64's records: the members and the directory's size the reader bounds are those
    zipfile lists. A comment that holds an end record of its own is read as zipfile reads it: the false one."""
    import zipfile

    from autograder.model.submission import END_RECORD_TAIL, zip_end_record

    for comment in (b"", b"a comment", bytes(0xFFFF)):
        for zip64 in (False, True):
            path = tmp_path / "z.zip"
            with zipfile.ZipFile(path, "w") as z:
                for i in range(3):
                    with z.open(f"m{i}.py", "w", force_zip64=zip64) as fh:
                        fh.write(b"x = 1\n")
                z.comment = comment
            data = path.read_bytes()
            with zipfile.ZipFile(path) as z:
                directory = sum(46 + len(i.orig_filename.encode()) + len(i.extra) + len(i.comment) for i in z.infolist())
                assert zip_end_record(data[-END_RECORD_TAIL:]) == (len(z.infolist()), directory), (comment, zip64)
    false_end = b"PK\x05\x06" + bytes(4) + (7).to_bytes(2, "little") * 2 + (99).to_bytes(4, "little") + bytes(6)
    with zipfile.ZipFile(path, "a") as z:
        z.comment = false_end
    assert zip_end_record(path.read_bytes()[-END_RECORD_TAIL:]) == (7, 99)


def test_a_submissions_zips_are_held_within_one_limit(tmp_path, monkeypatch):
    """Each zip is held in memory while its submission is read: twenty of 64 MiB once made 1.3 GB."""
    import zipfile

    from autograder.model import submission

    folder = tmp_path / "student"
    folder.mkdir()
    for name in ("a.zip", "b.zip"):
        with zipfile.ZipFile(folder / name, "w") as z:
            z.writestr(f"{name[0]}.py", "x = 1\n" * 100)
    size = (folder / "a.zip").stat().st_size
    monkeypatch.setattr(submission, "MAX_ZIP_BYTES", size + 10)
    sub = read_submission(folder)
    assert sub.cells["attention"] == [("a.py", "x = 1\n" * 100)]
    assert sub.problems == [f"b.zip is {size:,} bytes, over the 10 left of a submission's limit of {size + 10:,} "
                            "for zips, so it was not read"]


def test_a_folder_is_listed_within_a_bound(tmp_path, monkeypatch):
    from autograder.model import submission

    monkeypatch.setattr(submission, "MAX_SCANNED", 5)
    folder = tmp_path / "student"
    (folder / "junk").mkdir(parents=True)
    (folder / "attention.py").write_text("x = 1\n")
    for i in range(10):
        (folder / "junk" / f"{i}.png").write_text("")
    sub = read_submission(folder)
    assert sub.cells["attention"] == [("attention.py", "x = 1\n")]
    assert sub.problems == ["junk/: more than 5 entries in its folders in all: the rest was not read"]


def test_several_files_for_one_notebook_say_which_is_graded_and_why(tmp_path):
    folder = tmp_path / "dana"
    folder.mkdir()
    notebook(folder / "attention (1).ipynb", {"masks-causal_mask": "copy = 1"})
    notebook(folder / "attention.ipynb", {"masks-causal_mask": "exact = 1"})
    os.utime(folder / "attention (1).ipynb", (2e9, 2e9))
    sub = read_submission(folder)
    assert ("attention.ipynb, cell masks-causal_mask", "exact = 1") in sub.cells["attention"]
    assert sub.notes == ["attention.ipynb: 2 files stand for it (attention (1).ipynb, attention.ipynb); "
                         "attention.ipynb is graded, the one named exactly so"]
    os.remove(folder / "attention.ipynb")
    notebook(folder / "Attention-2.ipynb", {"masks-causal_mask": "older = 1"})
    sub = read_submission(folder)
    assert ("attention.ipynb, cell masks-causal_mask", "copy = 1") in sub.cells["attention"]
    assert sub.notes == ["attention.ipynb: 2 files stand for it (Attention-2.ipynb, attention (1).ipynb); "
                         "attention (1).ipynb is graded, the newest"]


def test_a_zip_member_named_longer_than_a_file_may_be_is_refused_unread(tmp_path):
    """65,000-character names once made a file-name pattern backtrack, 10 s a member, in the grader's own
    process: no pattern reads such a name, and one problem counts them."""
    import time
    import zipfile

    from autograder.model.submission import notebook_named

    with zipfile.ZipFile(tmp_path / "trent.zip", "w") as z:
        for i in range(5):
            z.writestr("_" * 64_990 + f"{i:04d}.ipynb", "{}")
        z.writestr("work/attention.py", "x = 1\n")
    started = time.perf_counter()
    sub = read_submission(tmp_path / "trent.zip")
    assert time.perf_counter() - started < 5
    assert sub.cells["attention"] == [("attention.py", "x = 1\n")]
    assert sub.problems == [f"trent.zip: 5 member(s) named with more than 255 characters (the first: {'_' * 60}...), "
                            "so it was not read"]
    started = time.perf_counter()
    assert notebook_named("_" * 65_000) is None and notebook_named(" " * 65_000 + "attention") is None
    assert time.perf_counter() - started < 1


def _run(cells: list[tuple[str, str]], monkeypatch) -> dict:
    """The namespace the cells leave, run in order as a sandbox runs them (its `get_ipython()` included)."""
    from autograder.isolation import magics

    monkeypatch.syspath_prepend(str(RELEASE))  # the setup cell imports the released helpers
    namespace: dict = {"get_ipython": magics.get_ipython}
    for _, code in cells:
        exec(compile(code, "cell", "exec"), namespace)
    return namespace


def test_cells_are_read_as_ipython_reads_them(tmp_path, monkeypatch):
    """Issue 53, item 7: magics and shell escapes are found by logical line, as IPython finds them, and turned
    into calls that do nothing when graded; everything else in the cell runs. Line by line, a black-style
    continuation starting with `!=` or `%` was commented out (combine_masks then always raised), the rest of a
    `!pip install a \\` was left behind, and `res = %timeit -o f()` or `torch.tril?` lost the whole cell."""
    answers = {
        "masks-causal_mask": "torch.tril?\ndef causal_mask(T_q, T_k=None, *, device=None):\n    return 'mask'\n",
        "masks-combine_masks": ("def combine_masks(causal, padding):\n    if (\n        causal.shape[-1]\n"
                                "        != padding.shape[-1]\n    ):\n        raise ValueError('keys differ')\n"
                                "    return 'combined'\n"),
        "heads-split_heads": "!pip install einops \\\n    jaxtyping\ndef split_heads(x, n_heads):\n    return 'split'\n",
        "positions-sinusoidal_encoding": ("def sinusoidal_encoding(T, d_model, base=10000.0):\n    if (\n"
                                          "        d_model\n        % 2\n    ):\n        raise ValueError('odd')\n"
                                          "    return 'pe'\n"),
        "timing-time_call": ("def time_call(fn, *args, repeats=5, warmup=1):\n    return 0.5\n\n"
                             "res = %timeit -o time_call(print)\nprint(res.average)\nAFTER = 1\n"),
    }
    magic = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
             "source": "%matplotlib inline\n!nvidia-smi\nFILL = -1e9\n"}
    sub = read_submission(notebook(tmp_path / "attention.ipynb", answers, [magic]))
    assert not sub.problems, sub.problems
    namespace = _run(sub.cells["attention"], monkeypatch)
    square = namespace["torch"].zeros(3, 3)
    assert namespace["causal_mask"](3) == "mask" and namespace["split_heads"](None, 2) == "split"
    assert namespace["combine_masks"](square, namespace["torch"].zeros(2, 3)) == "combined"
    with pytest.raises(ValueError, match="keys differ"):
        namespace["combine_masks"](square, namespace["torch"].zeros(2, 4))
    assert namespace["sinusoidal_encoding"](4, 8) == "pe"
    with pytest.raises(ValueError, match="odd"):
        namespace["sinusoidal_encoding"](4, 7)
    assert namespace["time_call"](print) == 0.5 and math.isnan(namespace["res"].average) and namespace["AFTER"] == 1


def test_a_cell_timed_or_captured_as_a_whole_runs_its_code(tmp_path, monkeypatch):
    """`%%time` and `%%capture` run the cell's code as the cell's own under IPython: its definitions count;
    any other cell magic (`%%bash`, `%%timeit`) does not run, as no magic does when graded."""
    answers = {"masks-causal_average": "%%time\ndef causal_average(T):\n    return 'timed'\n",
               "masks-causal_mask": "%%capture out\n%%time\ndef causal_mask(T_q, T_k=None, *, device=None):\n"
                                    "    return 'captured'\n",
               "masks-padding_mask": "%%bash\ndef padding_mask(lengths, T):\n    return 'shell'\n"}
    namespace = _run(read_submission(notebook(tmp_path / "attention.ipynb", answers)).cells["attention"], monkeypatch)
    assert namespace["causal_average"](2) == "timed" and namespace["causal_mask"](2) == "captured"
    assert "padding_mask" not in namespace


def test_a_byte_order_mark_is_read_past(tmp_path):
    """Issue 53, item 8: Python runs a module that starts with a UTF-8 byte-order mark, and editors open such a
    notebook; both scored 0 in every part ("`causal_average` is not defined")."""
    (tmp_path / "marked.py").write_bytes(b"\xef\xbb\xbfdef causal_average(T):\n    return T\n")
    sub = read_submission(tmp_path / "marked.py")
    assert sub.cells["attention"] == [("marked.py", "def causal_average(T):\n    return T\n")] and not sub.problems
    path = notebook(tmp_path / "attention.ipynb", {"masks-causal_average": "def causal_average(T):\n    return T\n"})
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    sub = read_submission(path)
    assert not sub.problems and ("attention.ipynb, cell masks-causal_average",
                                 "def causal_average(T):\n    return T\n") in sub.cells["attention"]


def test_a_notebook_built_to_make_ipythons_transformer_work_costs_one_budget(tmp_path, monkeypatch):
    """Each magic makes IPython read its whole cell again: 300 cells of 200 magics would be read for minutes
    in the grader's own process. What it reads of a submission is bounded once, and the cells it could not
    turn are named in one note."""
    from IPython.core import inputtransformer2

    from autograder.model import jupyter

    release_cells("attention")  # the release's cells, turned once for every submission: not this one's
    read = []
    real = inputtransformer2.make_tokens_by_line
    monkeypatch.setattr(inputtransformer2, "make_tokens_by_line", lambda lines: read.append(sum(map(len, lines))) or real(lines))
    costly = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": "%a\n" * 200}
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {}, [costly] * 300))
    assert sum(read) <= jupyter.MAX_TRANSFORM_BYTES
    [note] = [p for p in sub.problems if "IPython" in p]
    assert note.startswith("attention.ipynb: cells ") and note.endswith(
        " more read as plain Python, not turned as IPython turns them: over what the grader reads to turn a "
        "submission's cells (131,072 bytes in all)")


def test_a_cell_read_past_the_transformers_budget_loses_nothing_if_it_is_python(tmp_path, monkeypatch):
    """Once a submission's budget for IPython's transformer is spent, its later cells are read as written: one
    that is Python as written runs as it would have (no note), one that is not is named in the note."""
    from autograder.model import jupyter

    monkeypatch.setattr(jupyter, "MAX_TRANSFORM_BYTES", 1)
    answers = {"masks-causal_average": "def causal_average(T):\n    return T\n",
               "masks-causal_mask": "%time 1\ndef causal_mask(T_q, T_k=None, *, device=None):\n    return T_q\n"}
    sub = read_submission(notebook(tmp_path / "attention.ipynb", answers))
    assert ("attention.ipynb, cell masks-causal_average", answers["masks-causal_average"]) in sub.cells["attention"]
    cells = json.loads((RELEASE / "attention.ipynb").read_text())["cells"]
    number = 1 + next(i for i, c in enumerate(cells) if assignment.nbgrader_metadata(c).get("grade_id") == "masks-causal_mask")
    assert [p for p in sub.problems if "IPython" in p] == [
        f"attention.ipynb: cell {number} read as plain Python, not turned as IPython turns it: {jupyter.OVER_BUDGET}"]


def test_a_cell_that_is_python_already_is_read_as_written(tmp_path, monkeypatch):
    """IPython's transformer is for cells that are not Python: one that parses runs as Python runs it, even
    where IPython's clean-up would break it (an indented comment first dedents the lines below it), and its
    cost (a pass over every cell) is not paid for the answer key's 39 KiB."""
    from autograder.model import jupyter

    release_cells("attention")  # turned once for every submission
    turned = []
    real = jupyter.Turner.python
    monkeypatch.setattr(jupyter.Turner, "python", lambda self, code: turned.append(code) or real(self, code))
    helper = "    # a helper\ndef causal_average(T):\n    return T\n"
    sub = read_submission(notebook(tmp_path / "attention.ipynb", {"masks-causal_average": helper,
                                                                  "masks-causal_mask": "%time 1\n"}))
    assert ("attention.ipynb, cell masks-causal_average", helper) in sub.cells["attention"] and turned == ["%time 1\n"]


def test_an_id_never_names_one_of_the_runs_own_files_in_the_reports_folder():
    from autograder.model.submission import safe_id
    from autograder.reports import CLASS_REPORT_FILE, GRADES_FILE
    from autograder.reports.items import ITEMS_FILE, OPTIONS_FILE

    for name in (GRADES_FILE, CLASS_REPORT_FILE, ITEMS_FILE, OPTIONS_FILE, "Items.CSV"):
        assert safe_id(name) == name + "_"
