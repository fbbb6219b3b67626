"""Reading a submission: the code a grader may run, and what is wrong with the files.

Only answer cells (matched by nbgrader grade_id) and the read-only setup cells
of the *source* notebook are kept: a student cannot slip code into a setup
cell, and exploratory or plotting cells never run while grading.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

ASSIGNMENT_DIR = Path(__file__).resolve().parent.parent / "assignments" / "attention"
NOTEBOOKS = ("attention", "quiz")
PUBLIC_HELPERS = ("selfcheck.py", "quizcheck.py")  # ship with the release; setup cells import them
PART_NOTEBOOK = {"masks": "attention", "scaling": "attention", "heads": "attention",
                 "positions": "attention", "timing": "attention", "quiz": "quiz"}

Cell = tuple[str, str]  # (label shown in tracebacks, code)


@dataclass
class Submission:
    """One student's code, ready to load, and the problems found while reading it."""

    id: str
    cells: dict[str, list[Cell]] = field(default_factory=dict)  # notebook name -> cells
    problems: list[str] = field(default_factory=list)

    def cells_for(self, part: str) -> list[Cell]:
        return self.cells.get(PART_NOTEBOOK[part], [])


class SubmissionError(ValueError):
    """A path that is not a submission at all."""


def read_submission(path: Path, source_dir: Path = ASSIGNMENT_DIR) -> Submission:
    """A submission from a .py module, a notebook, or a folder holding one student's files."""
    path = Path(path)
    if path.is_dir():
        submission = Submission(path.name)
        files = sorted(p for p in path.rglob("*") if p.suffix in (".ipynb", ".py") and ".ipynb_checkpoints" not in p.parts)
        notebooks = [p for p in files if p.suffix == ".ipynb" and p.stem in NOTEBOOKS]
        modules = [p for p in files if p.suffix == ".py" and p.name not in PUBLIC_HELPERS]
        for nb in notebooks:
            _add_notebook(submission, nb, source_dir)
        if not notebooks:
            for module in modules:
                _add_module(submission, module)
        if not submission.cells:
            submission.problems.append("no attention.ipynb, quiz.ipynb or .py file found")
        return submission
    if not path.is_file():
        raise SubmissionError(f"{path}: no such file or folder")
    submission = Submission(path.stem)
    if path.suffix == ".py":
        _add_module(submission, path)
    elif path.suffix == ".ipynb":
        _add_notebook(submission, path, source_dir)
    else:
        raise SubmissionError(f"{path}: a submission is a .py module, a .ipynb notebook or a folder")
    return submission


def _add_module(submission: Submission, path: Path) -> None:
    code = path.read_text(encoding="utf-8", errors="replace")
    for notebook in NOTEBOOKS:
        submission.cells.setdefault(notebook, []).append((path.name, code))


def _add_notebook(submission: Submission, path: Path, source_dir: Path) -> None:
    name = path.stem if path.stem in NOTEBOOKS else "attention"
    source = _read_cells(source_dir / f"{name}.ipynb")
    if source is None:
        raise SubmissionError(f"the source notebook {source_dir / (name + '.ipynb')} is missing or unreadable")
    student = _read_cells(path)
    if student is None:
        submission.problems.append(f"{path.name}: unreadable notebook (not valid notebook JSON)")
        submission.cells[name] = []
        return
    answers: dict[str, str] = {}
    for grade_id, code, is_answer in student:
        if not is_answer:
            continue
        if grade_id in answers:
            submission.problems.append(f"{path.name}: answer cell {grade_id} appears more than once; the first is graded")
            continue
        answers[grade_id] = code
    cells: list[Cell] = []
    for grade_id, code, is_answer in source:
        if not is_answer and grade_id.startswith("setup"):
            cells.append((f"{name}.ipynb, cell {grade_id}", code))
        elif is_answer:
            if grade_id not in answers:
                submission.problems.append(f"{path.name}: answer cell {grade_id} is missing")
                continue
            cells.append((f"{name}.ipynb, cell {grade_id}", _strip_magics(answers[grade_id])))
    submission.cells[name] = cells


def _read_cells(path: Path) -> list[tuple[str, str, bool]] | None:
    """(grade_id, code, is answer cell) for each nbgrader code cell, or None if unreadable."""
    try:
        notebook = json.loads(path.read_text(encoding="utf-8"))
        cells = []
        for cell in notebook["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.get("cell_type") != "code" or "grade_id" not in meta:
                continue
            source = cell.get("source", "")
            code = "".join(source) if isinstance(source, list) else str(source)
            cells.append((str(meta["grade_id"]), code, bool(meta.get("solution")) and not meta.get("grade")))
        return cells
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _strip_magics(code: str) -> str:
    """IPython magics and shell escapes mean nothing outside a kernel: comment them out."""
    return "\n".join("# " + line if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines())
