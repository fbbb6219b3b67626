"""The hostile and broken submissions of tests/adversarial/cases/ and the notebook cases built here, as
`Case`s, and how each is written into a folder for the grader (see tests/adversarial/README.md).
Shared by the adversarial suite and the class-level guarantee (tests/test_one_submission_costs_only_itself.py)."""

from __future__ import annotations

import json
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
CORPUS = ROOT / "tests" / "corpus"
SOURCE_NOTEBOOK = ROOT / "assignments" / "attention" / "attention.ipynb"
QUIZ_NOTEBOOK = ROOT / "assignments" / "attention" / "quiz.ipynb"
TWINS = {"base": "", "buggy_masks_fill_zero": (CORPUS / "buggy" / "masks_fill_zero.py").read_text()}
SPOOF = "spoofed_student"


@dataclass(frozen=True)
class Case:
    """One hostile or broken submission and what it must score."""

    name: str
    why: str
    earns: str
    runner: str = "cli"
    position: str = "bottom"
    feedback: str = ""
    known_issue: str = ""  # a grader bug this case finds, owned elsewhere: its test is expected to fail until fixed
    notebook: bytes | None = None  # a notebook case carries its file; the others are patches of base.py
    patch: str = ""
    run: str = "main"  # which command-line run grades it (RUNS)
    order: str = ""  # "first": the first submission of its run, graded at once beside the honest base.py
    within: float = 0.0  # engine cases: at most this many call time limits in all
    problem: str = ""  # text the submission's problem notes must carry
    file: str = ""  # a folder case: the name of the patch's file in the folder ("" for none)
    links: tuple[tuple[str, str], ...] = ()  # a folder case: (name, target) symbolic links in the folder
    specials: tuple[tuple[str, str], ...] = ()  # a folder case: (name, "fifo" or "socket")
    path_link: str = ""  # the submission PATH itself is a symbolic link to this target
    file_name: str = ""  # the submission file's name, with \x escapes for bytes that are not UTF-8
    id: str = ""  # the id the grader must give it (as grades.csv shows it), when not its name

    @property
    def sid(self) -> str:
        """The submission id the reports carry."""
        return self.id or self.name

    @property
    def is_folder(self) -> bool:
        return bool(self.file or self.links or self.specials)


def _patch_cases() -> list[Case]:
    cases = []
    for path in sorted((HERE / "cases").glob("*.py")):
        text = path.read_text()
        lines = re.findall(r"^# ([\w-]+): (.*)$", text.split("\n\n", 1)[0], re.M)
        header = dict(lines)
        links = tuple(tuple(v.split(" -> ", 1)) for k, v in lines if k == "link")
        specials = tuple(tuple(v.split()) for k, v in lines if k == "special")
        cases.append(Case(path.stem, header["why"], header["earns"], header.get("runner", "cli"),
                          header.get("position", "bottom"), header.get("feedback", ""), header.get("known-issue", ""),
                          patch=text, run=header.get("run", "main"), order=header.get("order", ""),
                          within=float(header.get("within", 0)), problem=header.get("problem", ""),
                          file=header.get("file", ""), links=links, specials=specials,
                          path_link=header.get("path-link", ""), file_name=header.get("file-name", ""),
                          id=header.get("id", "")))
    return cases


def _notebook_cases() -> list[Case]:
    """Notebooks: the source notebook (answers included) broken or tampered with."""
    text = SOURCE_NOTEBOOK.read_text()
    notebook = json.loads(text)
    cells = notebook["cells"]

    def grade_id(cell: dict) -> str:
        return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")

    def index(gid: str) -> int:
        return next(i for i, c in enumerate(cells) if grade_id(c) == gid)

    def with_source(cell: dict, source: str) -> dict:
        return {**json.loads(json.dumps(cell)), "source": source}

    edited = json.loads(json.dumps(cells))
    wrong_average = with_source(cells[index("masks-causal_average")], "def causal_average(T):\n    return torch.zeros(T, T)\n")
    wrong_padding = with_source(cells[index("masks-padding_mask")], "def padding_mask(lengths, T):\n    return None\n")
    edited.insert(index("masks-causal_average") + 1, wrong_average)  # a later copy is what Restart & Run All leaves
    edited.insert(index("masks-padding_mask"), wrong_padding)  # an earlier one is replaced by the answer after it
    edited = [c for c in edited if grade_id(c) != "masks-causal_mask"]
    cut_and_copied = {**notebook, "cells": edited}

    hostile = json.loads(json.dumps(cells))
    setup = index("setup")
    hostile[setup] = with_source(cells[setup], "import os\nos._exit(1)\n")  # the source's setup cell is run instead
    kill = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos._exit(1)\n"}
    fake_answer = {**kill, "metadata": {"nbgrader": {"grade_id": "masks-extra", "solution": True, "grade": False}}}
    fake_grade = {**kill, "metadata": {"nbgrader": {"grade_id": "grade-masks", "solution": False, "grade": True}}}
    hostile[setup + 1:setup + 1] = [kill, fake_answer, fake_grade]
    tampered = {**notebook, "cells": hostile}

    # A grade_id that ends the class table's row and draws a row of its own (the id shows in a problem note).
    spoof_id = f"x\n\x1b[1A\x1b[2K\r{SPOOF}  20  20  10  graded\x1b[8m"
    spoof_cell = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": spoof_id, "solution": True, "grade": False}},
                  "execution_count": None, "outputs": [], "source": "pass\n"}
    spoofed = {**notebook, "cells": json.loads(json.dumps(cells)) + [spoof_cell, spoof_cell]}

    def added(source: object) -> dict:
        return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": source}

    not_text = {**notebook, "cells": json.loads(json.dumps(cells)) + [added(["x = 1\n", 5])]}
    # 40,000 integers that all hash to 0 (multiples of 2**61 - 1): a set of them is built in quadratic time
    colliding = "{" + ", ".join(str(k * (2**61 - 1)) for k in range(1, 40_001)) + "}"
    collide = {**notebook, "cells": json.loads(json.dumps(cells)) + [added(f"_TABLE = {colliding}\n")]}
    separated = json.loads(json.dumps(cells))
    average = index("masks-causal_average")
    separated[average] = with_source(cells[average], "def causal_average(T):\n    return _lower_average(T)\n")
    separated.insert(average, added("def _lower_average(T):  # the helper \u2028 an answer cell uses\n"
                                    "    ones = torch.tril(torch.ones(T, T))\n"
                                    "    return ones / ones.sum(dim=-1, keepdim=True)\n"))
    helper_with_separator = {**notebook, "cells": separated}
    quiz = json.loads(QUIZ_NOTEBOOK.read_text())
    first = next(c for c in quiz["cells"] if grade_id(c) == "quiz-q01")
    first["source"] = f"answer_q01 = {colliding}\n"

    deep = 100_000
    return [
        Case("nb_cell_source_not_text", "a cell the student added whose source list holds a number: reading the "
             "class raised TypeError in the run's main process, and nothing was written for anyone", "base",
             notebook=json.dumps(not_text).encode(), problem="source is not text"),
        Case("nb_colliding_integers", "a cell the student added holds a set of 40,000 integers that hash alike: "
             "judging it a constant built the set, seconds of the run's start-up CPU (now its own sandbox pays)", "at-most base",
             notebook=json.dumps(collide).encode()),
        Case("nb_helper_comment_line_separator", "a helper cell whose comment holds U+2028 (a line break for "
             "str.splitlines, not for Python): its lines were miscounted and the helper lost", "base",
             notebook=json.dumps(helper_with_separator).encode()),
        Case("nb_colliding_integers_quiz", "a quiz answer that is a set of 40,000 integers that hash alike: reading "
             "it as a literal built the set, seconds of a grading worker's CPU", "at-most base",
             notebook=json.dumps(quiz).encode(), run="later"),
        Case("nb_corrupt_json", "the notebook's JSON is cut in half", "nothing", feedback="not defined",
             notebook=text[: len(text) // 2].encode()),
        Case("nb_deleted_and_duplicated_cells", "the causal_mask answer cell deleted; causal_average duplicated wrong "
             "after (the copy Restart & Run All leaves: graded), padding_mask duplicated wrong before (replaced by the "
             "answer after it)", "zero-on causal_mask, causal_average",
             notebook=json.dumps(cut_and_copied).encode()),
        Case("nb_code_outside_answer_cells", "os._exit in the setup cell, in a plain code cell, in an answer cell the "
             "source does not have and in a grade cell: none of them may run", "base",
             notebook=json.dumps(tampered).encode()),
        Case("nb_deeply_nested_json", f"the notebook is {deep:,} nested JSON lists: a recursive reader overflows "
             "(RecursionError) and the failing student opts out of grading", "nothing",
             notebook=b'{"cells": ' + b"[" * deep + b"]" * deep + b', "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'),
        Case("nb_table_spoof", "a duplicated answer cell whose grade_id holds a newline and terminal escapes: "
             "the class table printed on the terminal gets a forged row", "base", notebook=json.dumps(spoofed).encode()),
    ]


CASES = _patch_cases() + _notebook_cases()
BY_NAME = {c.name: c for c in CASES}


def fill(text: str, placeholders: dict[str, str]) -> str:
    for key, value in placeholders.items():
        text = text.replace(f"@{key}@", value)
    return text


def source(case: Case, placeholders: dict[str, str]) -> bytes:
    if case.notebook is not None:
        return case.notebook
    base = (CORPUS / "base.py").read_text()
    text = {"top": case.patch + "\n\n" + base, "alone": case.patch}.get(case.position, base + "\n\n" + case.patch)
    return fill(text, placeholders).encode()


def materialize(case: Case, folder: Path, placeholders: dict[str, str]) -> Path:
    """The case as the grader will see it in `folder`: a file, a folder of files, links and special files, or a link."""
    if case.path_link:
        target = fill(case.path_link, placeholders)
        path = folder / f"{case.name}{Path(target).suffix}"
        path.symlink_to(target)
        return path
    if case.file_name:  # the name's bytes as they are, UTF-8 or not
        path = folder / os.fsdecode(case.file_name.encode("latin-1").decode("unicode_escape").encode("latin-1"))
        path.write_bytes(source(case, placeholders))
        return path
    if not case.is_folder:
        path = folder / f"{case.name}{'.ipynb' if case.notebook is not None else '.py'}"
        path.write_bytes(source(case, placeholders))
        return path
    path = folder / case.name
    path.mkdir()
    for name, target in case.links:
        (path / name).symlink_to(fill(target, placeholders))
    for name, kind in case.specials:
        if kind == "fifo":
            os.mkfifo(path / name)
        else:  # a socket file: bound relative to its folder, as a full path may be too long for AF_UNIX
            here = os.getcwd()
            os.chdir(path)
            try:
                with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
                    server.bind(name)
            finally:
                os.chdir(here)
    if case.file:
        (path / case.file).write_bytes(source(case, placeholders))
    return path


def write_twins(folder: Path, names=tuple(TWINS)) -> list[Path]:
    base = (CORPUS / "base.py").read_text()
    paths = []
    for name in names:
        patch = TWINS[name]
        paths.append(folder / f"{name}.py")
        paths[-1].write_text(base + ("\n\n" + patch if patch else ""))
    return paths
