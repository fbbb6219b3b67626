"""Reading a submission: the code a grader may run, and what is wrong with the files.

A submission is data. Its files are read without following a symbolic link, and
a link, a pipe, a device or a file too large is refused with a note before
anything is read; a notebook that is not valid JSON (or nested too deeply to
read) is noted as unreadable. Nothing a student chose can make the grader read
anything outside the submission or wait on it.

Only answer cells (matched by nbgrader grade_id) and the read-only setup cells
of the *release* notebook run: a student cannot slip code into a setup cell,
and exploratory or plotting cells never run while grading.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from .. import assignment
from ..text import printable

MAX_PY_BYTES = 2 * 2**20
MAX_NOTEBOOK_BYTES = 32 * 2**20
MAX_FILES = 500  # entries looked at in a submission folder
MAX_DEPTH = 8

Cell = tuple[str, str]  # (label shown in tracebacks, code)


@dataclass
class Submission:
    """One student's code, ready to load, and the problems found while reading it."""

    id: str
    cells: dict[str, list[Cell]] = field(default_factory=dict)  # notebook name -> cells
    problems: list[str] = field(default_factory=list)
    newest_file: float = 0.0  # modification time of its newest file: a later resubmission is graded again

    def cells_for(self, part: str) -> list[Cell]:
        return self.cells.get(assignment.part(part).notebook, [])

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "cells": {k: [list(c) for c in v] for k, v in self.cells.items()},
                "problems": self.problems, "newest_file": self.newest_file}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Submission":
        cells = {str(k): [(str(a), str(b)) for a, b in v] for k, v in data["cells"].items()}
        return cls(str(data["id"]), cells, [str(p) for p in data["problems"]], float(data.get("newest_file", 0.0)))


class SubmissionError(ValueError):
    """A path that is not a submission at all."""


def submission_id(path: Path) -> str:
    """The folder's name, or the file's stem."""
    return path.name if path.is_dir() and not path.is_symlink() else path.stem


def read_submission(path: Path, sid: str | None = None) -> Submission:
    """A submission from a .py module, a notebook, or a folder holding one student's files."""
    path = Path(path)
    submission = Submission(sid or submission_id(path))
    try:
        info = os.lstat(path)
    except OSError:
        raise SubmissionError(f"{path}: no such file or folder") from None
    if stat.S_ISDIR(info.st_mode):
        _read_folder(submission, path)
    elif stat.S_ISREG(info.st_mode) and path.suffix in (".py", ".ipynb"):
        _read_file(submission, path, path.name)
    elif stat.S_ISREG(info.st_mode):
        raise SubmissionError(f"{path}: a submission is a .py module, a .ipynb notebook or a folder")
    else:
        submission.problems.append(_refused(path.name, info))
    if not submission.cells and not submission.problems:
        submission.problems.append("no attention.ipynb, quiz.ipynb or .py file found")
    return submission


def _read_folder(submission: Submission, folder: Path) -> None:
    found: list[tuple[str, Path]] = []  # (path shown in notes, path)
    _scan(submission, folder, "", found, 0)
    notebooks = [(shown, p) for shown, p in found if p.suffix == ".ipynb" and p.stem in assignment.NOTEBOOKS]
    modules = [(shown, p) for shown, p in found if p.suffix == ".py" and p.name not in assignment.PUBLIC_HELPERS]
    for shown, path in notebooks or modules:
        _read_file(submission, path, shown)
    if not notebooks and not modules:
        submission.problems.append("no attention.ipynb, quiz.ipynb or .py file found")


def _scan(submission: Submission, folder: Path, prefix: str, found: list[tuple[str, Path]], depth: int) -> None:
    """Every regular .py and .ipynb file below `folder`, links and special files refused."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        submission.problems.append(f"{printable(prefix or folder.name)}: could not be listed ({exc.strerror})")
        return
    for entry in entries:
        shown = prefix + entry.name
        if len(found) >= MAX_FILES or depth > MAX_DEPTH:
            submission.problems.append(f"more than {MAX_FILES} files or {MAX_DEPTH} levels of folders: the rest was not read")
            return
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            if entry.name not in (".ipynb_checkpoints", "__pycache__"):
                _scan(submission, Path(entry.path), shown + "/", found, depth + 1)
        elif stat.S_ISREG(info.st_mode):
            if Path(entry.name).suffix in (".py", ".ipynb"):
                found.append((shown, Path(entry.path)))
                submission.newest_file = max(submission.newest_file, info.st_mtime)
        elif Path(entry.name).suffix in (".py", ".ipynb") or stat.S_ISLNK(info.st_mode):
            submission.problems.append(_refused(shown, info))


def _refused(shown: str, info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        return f"{printable(shown)} is a symbolic link: links are never followed, so it was not read"
    return f"{printable(shown)} is not a regular file (a pipe, socket or device), so it was not read"


def _read_bytes(path: Path, limit: int) -> bytes | str:
    """The file's bytes, or why they were not read. Opened without following a link and without
    waiting on a pipe; what is opened must be a regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return f"could not be opened ({exc.strerror})"
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            return "is not a regular file, so it was not read"
        if info.st_size > limit:
            return f"is {info.st_size:,} bytes, over the limit of {limit:,}, so it was not read"
        return fh.read(limit + 1)[:limit]


def _read_file(submission: Submission, path: Path, shown: str) -> None:
    submission.newest_file = max(submission.newest_file, os.lstat(path).st_mtime)
    data = _read_bytes(path, MAX_NOTEBOOK_BYTES if path.suffix == ".ipynb" else MAX_PY_BYTES)
    if isinstance(data, str):
        submission.problems.append(f"{printable(shown)} {data}")
        return
    if path.suffix == ".py":
        code = data.decode("utf-8", errors="replace")
        for notebook in assignment.NOTEBOOKS:
            submission.cells.setdefault(notebook, []).append((printable(path.name), code))
    else:
        _add_notebook(submission, data, path.stem, shown)


def _add_notebook(submission: Submission, data: bytes, stem: str, shown: str) -> None:
    name = stem if stem in assignment.NOTEBOOKS else assignment.NOTEBOOKS[0]
    student = _notebook_cells(data)
    if student is None:
        submission.problems.append(f"{printable(shown)}: unreadable notebook (not valid notebook JSON)")
        submission.cells.setdefault(name, [])
        return
    answers: dict[str, str] = {}
    for grade_id, code, is_answer in student:
        if not is_answer:
            continue
        if grade_id in answers:
            submission.problems.append(f"{printable(shown)}: answer cell {printable(grade_id)} appears more than once; "
                                       "the first is graded")
            continue
        answers[grade_id] = code
    cells: list[Cell] = []
    for grade_id, code, is_answer in release_cells(name):
        if not is_answer and grade_id.startswith(assignment.SETUP_CELL_PREFIX):
            cells.append((f"{name}.ipynb, cell {grade_id}", code))
        elif is_answer:
            if grade_id not in answers:
                submission.problems.append(f"{printable(shown)}: answer cell {grade_id} is missing")
                continue
            cells.append((f"{name}.ipynb, cell {grade_id}", _strip_magics(answers[grade_id])))
    submission.cells[name] = cells


@lru_cache(maxsize=None)
def release_cells(notebook: str) -> tuple[tuple[str, str, bool], ...]:
    """(grade_id, code, is answer cell) of the released notebook `notebook`."""
    path = assignment.release_folder() / f"{notebook}.ipynb"
    cells = _notebook_cells(path.read_bytes()) if path.is_file() else None
    if cells is None:
        raise SubmissionError(f"the released notebook {path} is missing or unreadable")
    return tuple(cells)


def setup_imports() -> list[str]:
    """The modules the release's setup cells import: a zygote imports them once for every sandbox."""
    import ast

    found: list[str] = []
    for notebook in assignment.NOTEBOOKS:
        for grade_id, code, is_answer in release_cells(notebook):
            if is_answer or not grade_id.startswith(assignment.SETUP_CELL_PREFIX):
                continue
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.Import):
                    found += [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.append(node.module)
    return list(dict.fromkeys(found))


def public_files() -> dict[str, bytes]:
    """The public helpers by file name: every sandbox finds them next to the code it runs."""
    folder = assignment.release_folder()
    return {name: (folder / name).read_bytes() for name in assignment.PUBLIC_HELPERS if (folder / name).is_file()}


def _notebook_cells(data: bytes) -> list[tuple[str, str, bool]] | None:
    """(grade_id, code, is answer cell) for each nbgrader code cell, or None if unreadable."""
    try:
        notebook = json.loads(data.decode("utf-8"))
        cells = []
        for cell in notebook["cells"]:
            meta = assignment.nbgrader_metadata(cell)
            if cell.get("cell_type") != "code" or "grade_id" not in meta:
                continue
            source = cell.get("source", "")
            code = "".join(source) if isinstance(source, list) else str(source)
            cells.append((str(meta["grade_id"]), code, assignment.is_answer_cell(cell)))
        return cells
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError, UnicodeDecodeError):
        return None


def _strip_magics(code: str) -> str:
    """IPython magics and shell escapes mean nothing outside a kernel: comment them out."""
    return "\n".join("# " + line if line.lstrip().startswith(("%", "!")) else line for line in code.splitlines())

