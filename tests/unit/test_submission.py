"""Reading submissions: files are data, nothing a student chose makes the grader follow, wait or choke."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder import assignment
from autograder.core.submission import (MAX_PY_BYTES, Submission, SubmissionError, read_submission, release_cells,
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


def test_duplicated_and_missing_answer_cells_are_noted(tmp_path):
    nb = json.loads((RELEASE / "attention.ipynb").read_text())
    answers = [c for c in nb["cells"] if assignment.is_answer_cell(c)]
    nb["cells"].remove(answers[0])
    nb["cells"].append(dict(answers[1], source="second copy"))
    (tmp_path / "attention.ipynb").write_text(json.dumps(nb))
    sub = read_submission(tmp_path / "attention.ipynb")
    assert any("is missing" in p for p in sub.problems) and any("more than once" in p for p in sub.problems)
    assert "second copy" not in "".join(code for _, code in sub.cells["attention"])


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
    assert "unreadable notebook" in read_submission(tmp_path / "attention.ipynb").problems[0]


def test_control_characters_in_what_a_student_named_are_escaped(tmp_path):
    nb = json.loads((RELEASE / "attention.ipynb").read_text())
    twin = next(c for c in nb["cells"] if assignment.is_answer_cell(c))
    evil = "masks\n\x1b[31mall passed"
    nb["cells"] += [dict(twin, metadata={"nbgrader": {"grade_id": evil, "solution": True, "grade": False}}),
                    dict(twin, metadata={"nbgrader": {"grade_id": evil, "solution": True, "grade": False}})]
    (tmp_path / "attention.ipynb").write_text(json.dumps(nb))
    problems = " ".join(read_submission(tmp_path / "attention.ipynb").problems)
    assert "\x1b" not in problems and "\n" not in problems and "\\x1b" in problems


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
