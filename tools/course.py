"""A throw-away nbgrader course: the whole workflow, end to end, in one folder.

Used by ``make demo``, the nbgrader integration test and the benchmark
(tests/benchmarks/compare_nbgrader.py). Nothing here touches the repository,
its gradebook, or the user's Jupyter configuration:

* the course root is a copy of ``nbgrader_config.py`` and
  ``assignments/attention/``, with the course id and a private exchange
  folder appended to its ``nbgrader_config.py`` (so ``nbgrader export`` or
  the formgrader work there as in any course);
* nbgrader runs with this Python (the venv's), its own Jupyter config and data
  folders, and a ``python3`` kernel that is this Python too
  (``tools.release.write_venv_kernelspec``);
* the students' side (fetch, edit, submit) runs nbgrader's own exchange
  classes in this process, one call each, which is the same code that
  ``nbgrader fetch_assignment`` / ``nbgrader submit`` run, without starting an
  interpreter per student.

A student's work is built from the *source* notebooks: every answer cell of
the fetched release gets the source's solution (markers removed), and chosen
answer cells get other code instead (a common mistake, a crash, a stub left
untouched).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

from autograder import assignment
from autograder.assignment import ASSIGNMENT, NOTEBOOKS, is_answer_cell

from . import release as rel

if TYPE_CHECKING:
    from autograder.api import RunOptions, RunOutcome

ROOT = rel.ROOT
SOURCE = ROOT / "assignments" / ASSIGNMENT
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


# --------------------------------------------------------------------------
# students' notebooks


def read_notebook(path: Path):
    import nbformat

    return nbformat.read(path, as_version=4)


def solution_code(source: str) -> str:
    """An answer cell of the source notebook as a student who solved it would
    leave it: the solution's lines kept, the marker lines gone."""
    return "\n".join(line for line in source.split("\n") if line.strip() not in SOLUTION_MARKERS)


def solution_answers(source_dir: Path = SOURCE) -> dict[str, dict[str, str]]:
    """notebook name -> {grade_id: solved answer cell} from the source notebooks."""
    answers: dict[str, dict[str, str]] = {}
    for name in NOTEBOOKS:
        nb = read_notebook(Path(source_dir) / f"{name}.ipynb")
        answers[name] = {assignment.nbgrader_metadata(c)["grade_id"]: solution_code(c.source) for c in nb.cells if is_answer_cell(c)}
    return answers


def answer_ids(source_dir: Path = SOURCE) -> dict[str, str]:
    """grade_id -> notebook name, for every answer cell."""
    return {grade_id: name for name, cells in solution_answers(source_dir).items() for grade_id in cells}


def fill_in(notebook: Path, answers: Mapping[str, str]) -> None:
    """Write ``answers`` (grade_id -> code) into the answer cells of the
    notebook file ``notebook``, as a student typing in JupyterLab would;
    every other cell, and every cell's metadata, stays as fetched."""
    import nbformat

    nb = read_notebook(notebook)
    found = set()
    for cell in nb.cells:
        grade_id = assignment.nbgrader_metadata(cell).get("grade_id")
        if is_answer_cell(cell) and grade_id in answers:
            cell.source = answers[grade_id]
            found.add(grade_id)
    missing = set(answers) - found
    if missing:
        raise KeyError(f"{notebook.name} has no answer cells {sorted(missing)}")
    nbformat.write(nb, notebook)


def _bound_names(tree: ast.Module) -> set[str]:
    """Names a module binds at its top level."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _free_names(tree: ast.AST) -> set[str]:
    """Names a piece of code reads without binding them anywhere in it."""
    import builtins

    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    stores = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    stores |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    stores |= {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return loads - stores - set(dir(builtins))


def _helpers(patch: ast.Module, available: set[str]) -> str:
    """Definitions of ``tests/corpus/base.py`` that ``patch`` uses (a corpus
    patch may use anything base.py defines) but the notebook does not
    define, e.g. base.py's ``_sync``; a student would have written them too."""
    base_text = (ROOT / "tests" / "corpus" / "base.py").read_text(encoding="utf-8")
    base = ast.parse(base_text)
    defs = {}
    for node in base.body:
        for name in _bound_names(ast.Module(body=[node], type_ignores=[])):
            defs.setdefault(name, node)
    wanted, queue = [], sorted(_free_names(patch) - available)
    while queue:
        name = queue.pop(0)
        node = defs.get(name)
        if node is None or node in wanted:
            continue
        wanted.append(node)
        queue += sorted(_free_names(node) - available)
    wanted.sort(key=lambda n: n.lineno)
    return "\n\n".join(ast.get_source_segment(base_text, n) for n in wanted)


def patch_cell(patch: str, answers: Mapping[str, str], part: str, setup: str = "") -> tuple[str, str]:
    """Where a validation-corpus patch (tests/corpus/buggy/*.py: it redefines
    one or more names of ``part``) goes in a notebook, and the cell's new code.

    The patch goes in the answer cell ``<part>-<name>`` of the last name it
    defines (in notebook order, so no later solution cell redefines it). It
    replaces the solution there, unless it builds on the solution's own
    definition (``class CausalSelfAttention(CausalSelfAttention)``): then it
    follows it, as a student who edited below their first attempt. Helpers
    of base.py that it uses and the notebook lacks come first.
    """
    tree = ast.parse(patch)
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    order = [g for g in answers if g.startswith(part + "-")]
    cells = [f"{part}-{name}" for name in defined if f"{part}-{name}" in answers]
    if not cells:
        raise ValueError(f"the patch defines {defined}, none of which has an answer cell {part}-<name>")
    cell = max(cells, key=order.index)
    builds_on_itself = any(
        isinstance(n, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == n.name for b in n.bases)
        for n in tree.body
    )
    available = _bound_names(ast.parse(setup)) if setup else set()
    for code in answers.values():
        available |= _bound_names(ast.parse(code))
    helpers = _helpers(tree, available)
    code = (helpers + "\n\n\n" if helpers else "") + patch.strip() + "\n"
    if builds_on_itself or len(cells) < len(defined):
        return cell, answers[cell].rstrip() + "\n\n\n" + code
    return cell, code


def setup_code(source_dir: Path = SOURCE, notebook: str = "attention") -> str:
    """The read-only setup cell of a source notebook."""
    nb = read_notebook(Path(source_dir) / f"{notebook}.ipynb")
    return "\n".join(c.source for c in nb.cells if assignment.nbgrader_metadata(c).get("grade_id") == "setup")


def corpus_patch(name: str, kind: str = "buggy") -> tuple[str, str]:
    """(part, patch text) of ``tests/corpus/<kind>/<name>.py``; the header
    comments are kept: they read like a student's note."""
    path = ROOT / "tests" / "corpus" / kind / f"{name}.py"
    text = path.read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("# part:"):
            return line.split(":", 1)[1].strip(), text
    raise ValueError(f"{path} has no '# part:' header")


# --------------------------------------------------------------------------
# the course


def make_course_root(folder: Path, *, course_id: str, exchange: Path) -> Path:
    """A course root: this project's ``nbgrader_config.py`` (with the course
    id and the exchange appended) and a copy of the assignment's source."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    config = (ROOT / "nbgrader_config.py").read_text(encoding="utf-8")
    config += (
        "\n# Added for this course (tools.course):\n"
        f"c.CourseDirectory.course_id = {course_id!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n"
    )
    (folder / "nbgrader_config.py").write_text(config, encoding="utf-8")
    shutil.copytree(SOURCE, folder / "assignments" / ASSIGNMENT, ignore=rel.ignore_files, dirs_exist_ok=True)
    return folder


@dataclass
class Course:
    """An nbgrader course in ``work``: ``course/`` (the course root),
    ``exchange/``, ``students/<id>/`` (each student's home) and ``jupyter/``
    (kernel spec, config and data folders)."""

    work: Path
    course_id: str = "attention-course"
    log: list[str] = field(default_factory=list)

    @property
    def root(self) -> Path:
        return self.work / "course"

    @property
    def exchange(self) -> Path:
        return self.work / "exchange"

    @property
    def jupyter(self) -> Path:
        return self.work / "jupyter"

    def home(self, student: str) -> Path:
        return self.work / "students" / student

    @classmethod
    def create(cls, work: Path, course_id: str = "attention-course") -> "Course":
        """A fresh course in ``work`` (emptied first)."""
        work = Path(work).resolve()
        if work.exists():
            shutil.rmtree(work)
        course = cls(work, course_id)
        make_course_root(course.root, course_id=course_id, exchange=course.exchange)
        rel.write_venv_kernelspec(course.jupyter / "path")
        for sub in ("config", "data"):
            (course.jupyter / sub).mkdir(parents=True, exist_ok=True)
        return course

    @classmethod
    def open(cls, work: Path, course_id: str = "attention-course") -> "Course":
        return cls(Path(work).resolve(), course_id)

    def env(self) -> dict[str, str]:
        """For nbgrader and the kernels it starts: this Python first, its
        kernel as ``python3``, and none of the user's Jupyter configuration."""
        env = rel.kernel_env(self.jupyter / "path")
        env["JUPYTER_CONFIG_DIR"] = str(self.jupyter / "config")
        env["JUPYTER_DATA_DIR"] = str(self.jupyter / "data")
        return env

    # ---- the instructor's side: nbgrader's command line

    def nbgrader(self, *args: str, cwd: Path | None = None, check: bool = True,
                 env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        """``nbgrader ARGS`` in the course root (its nbgrader_config.py names
        the exchange and the course id), with ``env`` added to the environment."""
        start = time.perf_counter()
        proc = rel.run_nbgrader(list(args), cwd=cwd or self.root, env={**self.env(), **(env or {})}, check=check)
        self.log.append(f"nbgrader {' '.join(args)}  ({time.perf_counter() - start:.1f} s)")
        return proc

    def generate(self) -> Path:
        """``nbgrader generate_assignment attention --force``."""
        self.nbgrader("generate_assignment", ASSIGNMENT, "--force")
        release = self.root / "release" / ASSIGNMENT
        rel.check_release_files(release, rel.source_notebooks(self.root / "assignments" / ASSIGNMENT))
        return release

    def release(self) -> None:
        """``nbgrader release_assignment attention`` into the exchange."""
        self.nbgrader("release_assignment", ASSIGNMENT, "--force")

    def collect(self) -> list[str]:
        """``nbgrader collect attention``; returns the collected students."""
        self.nbgrader("collect", ASSIGNMENT, "--update")
        submitted = self.root / "submitted"
        return sorted(p.parent.name for p in submitted.glob(f"*/{ASSIGNMENT}") if p.is_dir())

    def autograde(self, *extra: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess:
        """``nbgrader autograde attention`` (every notebook, top to bottom, in
        a fresh kernel per notebook)."""
        return self.nbgrader("autograde", ASSIGNMENT, "--force", *extra, env=env)

    # ---- the students' side: nbgrader's exchange, in this process

    def _exchange_config(self, student: str):
        from traitlets.config import Config

        config = Config()
        config.CourseDirectory.course_id = self.course_id
        config.CourseDirectory.assignment_id = ASSIGNMENT
        config.CourseDirectory.student_id = student
        config.Exchange.root = str(self.exchange)
        config.Exchange.assignment_dir = str(self.home(student))
        config.Exchange.cache = str(self.jupyter / "data" / "nbgrader_cache" / student)
        return config

    def _exchange(self, kind: str, student: str):
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange import ExchangeFactory

        config = self._exchange_config(student)
        coursedir = CourseDirectory(config=config)
        authenticator = Authenticator(config=config)
        factory = ExchangeFactory(config=config)
        make = {"fetch": factory.FetchAssignment, "submit": factory.Submit}[kind]
        return make(coursedir=coursedir, authenticator=authenticator, config=config)

    def fetch(self, student: str) -> Path:
        """``nbgrader fetch_assignment attention`` in the student's home;
        returns the fetched assignment folder."""
        home = self.home(student)
        home.mkdir(parents=True, exist_ok=True)
        self._exchange("fetch", student).start()
        return home / ASSIGNMENT

    def submit(self, student: str) -> None:
        """``nbgrader submit attention --student <id>`` from the student's
        home (the id is the OS user's unless given, as on a shared machine)."""
        self._exchange("submit", student).start()


# --------------------------------------------------------------------------
# a simulated student


@dataclass
class SimulatedStudent:
    """One student's work: the solution everywhere, except ``answers``
    (grade_id -> code) and ``untouched`` (grade ids left as released; ``"*"``
    for every cell). ``about`` says what they did."""

    name: str
    about: str
    answers: dict[str, str] = field(default_factory=dict)
    untouched: frozenset[str] = frozenset()

    def work(self, solutions: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
        """notebook name -> {grade_id: code} to type into the fetched notebooks."""
        known = {grade_id for cells in solutions.values() for grade_id in cells}
        unknown = (set(self.answers) | (set(self.untouched) - {"*"})) - known
        if unknown:
            raise KeyError(f"{self.name}: no answer cells {sorted(unknown)}")
        out: dict[str, dict[str, str]] = {}
        for notebook, cells in solutions.items():
            out[notebook] = {}
            for grade_id, code in cells.items():
                if "*" in self.untouched or grade_id in self.untouched:
                    continue
                out[notebook][grade_id] = self.answers.get(grade_id, code)
        return out


def with_patch(name: str, about: str, patch_name: str, kind: str = "buggy") -> SimulatedStudent:
    """A student whose work is the solution with one corpus patch in place."""
    part, patch = corpus_patch(patch_name, kind)
    cell, code = patch_cell(patch, solution_answers()["attention"], part, setup_code())
    return SimulatedStudent(name, about, {cell: code})


def enrol(course: Course, students: Iterable[SimulatedStudent], *, say=lambda _m: None) -> list[str]:
    """Each student fetches the released assignment, writes their work into
    the fetched notebooks, and submits it."""
    solutions = solution_answers(course.root / "assignments" / ASSIGNMENT)
    names = []
    for student in students:
        folder = course.fetch(student.name)
        for notebook, answers in student.work(solutions).items():
            if answers:
                fill_in(folder / f"{notebook}.ipynb", answers)
        course.submit(student.name)
        say(f"  {student.name:<8} {student.about}")
        names.append(student.name)
    return names


def set_up_class(work: Path, students: Iterable[SimulatedStudent], *, course_id: str = "attention-course",
                 say=lambda _m: None) -> Course:
    """A course in ``work`` after generate_assignment, release_assignment,
    every student's fetch and submit, and collect."""
    students = list(students)
    course = Course.create(work, course_id)
    say(f"nbgrader generate_assignment {ASSIGNMENT}   (course root {rel.shown(course.root)})")
    course.generate()
    say(f"nbgrader release_assignment {ASSIGNMENT}    (exchange {rel.shown(course.exchange)})")
    course.release()
    say(f"nbgrader fetch_assignment / submit, as {len(students)} students:")
    enrol(course, students, say=say)
    say(f"nbgrader collect {ASSIGNMENT}")
    collected = course.collect()
    missing = sorted({s.name for s in students} - set(collected))
    if missing:
        raise RuntimeError(f"nbgrader collect missed {missing}")
    return course


def grade_course(course: Course, out: Path, *extra: str, quiet: bool = True) -> subprocess.CompletedProcess:
    """``python -m autograder grade --nbgrader attention --out OUT`` in the
    course root, as an instructor runs it."""
    args = [sys.executable, "-m", "autograder", "grade", "--nbgrader", ASSIGNMENT, "--out", str(out), *extra]
    if quiet:
        args.append("--quiet")
    return subprocess.run(args, cwd=course.root, env=course.env(), capture_output=quiet, text=True)


def run_in_course(course: Course, options: "RunOptions") -> "RunOutcome":
    """Our class run (autograder.api.grade_class) on the course, in this process, as the command line runs it in
    the course root: nbgrader reads the course's configuration with the course's Jupyter folders."""
    from dataclasses import replace

    from autograder.api import grade_class

    saved = dict(os.environ)
    os.environ.update(course.env())
    try:
        return grade_class(replace(options, nbgrader=ASSIGNMENT, course_root=course.root))
    finally:
        os.environ.clear()
        os.environ.update(saved)


def export_grades(course: Course, to: Path | None = None) -> list[dict[str, str]]:
    """``nbgrader export`` (grades.csv of the gradebook), read back."""
    import csv

    to = Path(to or course.work / "nbgrader-export.csv")
    course.nbgrader("export", f"--to={to}")
    with to.open(newline="") as fh:
        return list(csv.DictReader(fh))


def gradebook_part_scores(db: Path, assignment_id: str = ASSIGNMENT) -> dict[str, dict[str, float | None]]:
    """student -> {part: auto score of grade cell ``grade-<part>``} from a gradebook."""
    from nbgrader.api import Gradebook

    scores: dict[str, dict[str, float | None]] = {}
    with Gradebook("sqlite:///" + str(db)) as gb:
        for submission in gb.assignment_submissions(assignment_id):
            cells = scores.setdefault(submission.student.id, {})
            for notebook in submission.notebooks:
                for grade in notebook.grades:
                    if grade.name.startswith(assignment.GRADE_CELL_PREFIX):
                        cells[grade.name[len(assignment.GRADE_CELL_PREFIX):]] = grade.auto_score
    return scores


def environment_note() -> str:
    """CPU count and load, for timing reports."""
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return f"{os.cpu_count()} CPUs, load average {load}"
