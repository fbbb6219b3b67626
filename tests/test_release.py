"""The student release and the solutions (``make release``).

* drift: regenerating gives the committed ``release/`` and ``solutions/``;
* the release leaks nothing: no solution, hidden test, grader import or quiz
  answer;
* the release runs top to bottom, every self-check saying "not implemented
  yet" / "not answered yet";
* nbgrader's own workflow (generate, release, fetch, submit, collect,
  autograde) gives the solution full marks and the untouched release 0.

Everything runs in temporary folders: the repository, its gradebook and the
user's Jupyter configuration are never touched.
"""

from __future__ import annotations

import filecmp
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder import release as rel
from autograder.course import make_course_root

ROOT = rel.ROOT
ASSIGNMENT = rel.ASSIGNMENT
SOURCE = ROOT / "assignments" / ASSIGNMENT
RELEASE = ROOT / "release" / ASSIGNMENT
SOLUTIONS = ROOT / "solutions" / ASSIGNMENT
NOTEBOOKS = rel.source_notebooks(SOURCE)
HINT = "run `make release` (python -m autograder.release) and commit release/ and solutions/"


# --------------------------------------------------------------------------
# fixtures


def make_course(folder: Path) -> Path:
    """A course root holding a copy of the configuration and the source."""
    return make_course_root(folder, course_id="attention-course", exchange=folder / "exchange")


@pytest.fixture(scope="module")
def jupyter_dir(tmp_path_factory) -> Path:
    """A JUPYTER_PATH entry whose python3 kernel is this venv's Python."""
    return rel.write_venv_kernelspec(tmp_path_factory.mktemp("jupyter"))


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A temporary course root after ``nbgrader generate_assignment``."""
    root = make_course(tmp_path_factory.mktemp("course"))
    rel.generate_release(root)
    return root


@pytest.fixture(scope="module")
def fresh_release(course) -> Path:
    return course / "release" / ASSIGNMENT


def read(path: Path):
    return nbformat.read(path, as_version=4)


def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


# --------------------------------------------------------------------------
# drift


def cell_view(cell) -> dict:
    """What must not drift in a release cell: no outputs or volatile fields."""
    return {
        "id": cell.get("id"),
        "cell_type": cell.cell_type,
        "source": cell.source,
        "nbgrader": cell.metadata.get("nbgrader"),
    }


def test_source_has_the_expected_notebooks():
    assert {"attention.ipynb", "quiz.ipynb"} <= set(NOTEBOOKS)
    for helper in rel.HELPERS:
        assert (SOURCE / helper).is_file()


def test_release_is_up_to_date(fresh_release):
    assert RELEASE.is_dir(), f"release/{ASSIGNMENT} is missing: {HINT}"
    fresh = sorted(p.name for p in fresh_release.iterdir())
    committed = sorted(p.name for p in RELEASE.iterdir())
    assert committed == fresh, f"release/{ASSIGNMENT} has other files than nbgrader makes: {HINT}"
    for name in fresh:
        if name.endswith(".ipynb"):
            new, old = read(fresh_release / name), read(RELEASE / name)
            assert old.metadata.get("kernelspec") == new.metadata.get("kernelspec"), f"{name}: {HINT}"
            old_view, new_view = [cell_view(c) for c in old.cells], [cell_view(c) for c in new.cells]
            first = next((i for i, (a, b) in enumerate(zip(old_view, new_view)) if a != b),
                         min(len(old_view), len(new_view)))
            assert old_view == new_view, (
                f"release/{ASSIGNMENT}/{name} drifted from assignments/ (first at cell {first}, "
                f"id {(new_view[first:first + 1] or old_view[first:first + 1] or [{}])[0].get('id')!r}): {HINT}")
            assert all(not c.get("outputs") for c in old.cells), f"{name} has outputs: {HINT}"
        else:
            assert filecmp.cmp(fresh_release / name, RELEASE / name, shallow=False), (
                f"release/{ASSIGNMENT}/{name} differs from assignments/{ASSIGNMENT}/{name}: {HINT}")


def test_solution_sources_are_up_to_date():
    assert SOLUTIONS.is_dir(), f"solutions/{ASSIGNMENT} is missing: {HINT}"
    expected = sorted([*NOTEBOOKS, *rel.HELPERS])
    assert sorted(p.name for p in SOLUTIONS.iterdir()) == expected, HINT
    for name in NOTEBOOKS:
        new, old = rel.solution_notebook(SOURCE / name), read(SOLUTIONS / name)
        view = lambda nb: [(c.get("id"), c.cell_type, c.source) for c in nb.cells]  # noqa: E731
        assert view(old) == view(new), f"solutions/{ASSIGNMENT}/{name} drifted from assignments/: {HINT}"
    for helper in rel.HELPERS:
        assert filecmp.cmp(SOURCE / helper, SOLUTIONS / helper, shallow=False), (
            f"solutions/{ASSIGNMENT}/{helper} differs from assignments/: {HINT}")


NUMBER = re.compile(r"\s*[-+]?\d[\d,]*(\.\d+)?(e[-+]?\d+)?\s*")


def masked(text: str) -> str:
    """Text with every number (and the padding around it) replaced by #."""
    return NUMBER.sub("#", text)


# Cells that measure wall-clock time: their numbers, plot and even verdict
# (on a busy machine) change from run to run.
TIMED = re.compile(r"\btime_(call|attention)\b")


def output_view(cell) -> list:
    """Outputs compared loosely: kinds and MIME types, and text with numbers
    masked unless the cell times something; never image bytes."""
    view = []
    timed = bool(TIMED.search(cell.source))
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            view.append(("stream", out.name, "" if timed else masked(out.text)))
        elif out.output_type == "error":
            view.append(("error", out.ename))
        else:
            data = out.get("data", {})
            text = data.get("text/plain", "") if not any(k.startswith("image/") for k in data) else ""
            view.append((out.output_type, tuple(sorted(data)), "" if timed else masked(text)))
    return view


def test_committed_solutions_pass_their_checks():
    """The answer key shows every self-check passing and every quiz answer right."""
    for name in NOTEBOOKS:
        nb = read(SOLUTIONS / name)
        assert not rel.failed_self_checks(nb), (
            f"solutions/{ASSIGNMENT}/{name}: {rel.failed_self_checks(nb)}: {HINT} (on a quiet machine)")
        for cell in code_cells(nb):
            if "selfcheck.check_" in cell.source:
                assert text_of(cell).lstrip().startswith("✔"), (name, cell.source, text_of(cell))
            if "quizcheck.check(" in cell.source:
                assert "right!" in text_of(cell), (name, cell.source, text_of(cell))
        assert all(not c.metadata.get("execution") for c in nb.cells)


def test_solutions_execute_like_the_committed_ones(tmp_path):
    """Rebuilding the solutions (which executes them: any error fails) gives
    the committed outputs, up to numbers."""
    out = rel.build_solutions(SOURCE, tmp_path / "solutions")
    for name in NOTEBOOKS:
        new, old = read(out / name), read(SOLUTIONS / name)
        for cell in code_cells(new):
            assert not any(o.output_type == "error" for o in cell.outputs), (name, cell.source)
            assert "execution" not in cell.metadata
        assert [output_view(c) for c in code_cells(old)] == [output_view(c) for c in code_cells(new)], (
            f"solutions/{ASSIGNMENT}/{name}: outputs differ from a fresh run: {HINT}")


# --------------------------------------------------------------------------
# the release leaks nothing


def release_dirs(fresh_release):
    dirs = [fresh_release]
    if RELEASE.is_dir():
        dirs.append(RELEASE)
    return dirs


def solution_regions(nb) -> list[list[str]]:
    regions, current = [], None
    for cell in nb.cells:
        for line in cell.source.split("\n"):
            if "BEGIN SOLUTION" in line:
                current = []
            elif "END SOLUTION" in line:
                regions.append(current)
                current = None
            elif current is not None:
                current.append(line)
    return regions


def lines_outside_solutions(nb) -> set[str]:
    lines, inside = set(), False
    for cell in nb.cells:
        for line in cell.source.split("\n"):
            if "BEGIN SOLUTION" in line:
                inside = True
            elif "END SOLUTION" in line:
                inside = False
            elif not inside:
                lines.add(line.strip())
    return lines


GRADER_IMPORT = re.compile(
    r"^\s*(?:from|import)\s+(?:attention_ref|autograder)\b"
    r"|__import__\(\s*['\"](?:attention_ref|autograder)"
    r"|import_module\(\s*['\"](?:attention_ref|autograder)",
    re.M,
)


def quiz_answers() -> dict[str, str]:
    from autograder.graders.quiz_key import ANSWERS

    return ANSWERS


MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def marker_and_import_leaks(folder: Path) -> list[str]:
    """Solution/hidden-test markers, stray Python files, grader imports."""
    problems = []
    files = sorted(folder.rglob("*"))
    problems += [f"{p}: should not ship" for p in files if p.name == "__pycache__" or p.suffix == ".pyc"]
    py = sorted(p.name for p in files if p.suffix == ".py")
    if py != sorted(rel.HELPERS):
        problems.append(f"{folder}: Python files {py}, expected only {sorted(rel.HELPERS)}")
    for path in files:
        if path.suffix not in (".py", ".ipynb"):
            continue
        text = path.read_text(encoding="utf-8")
        problems += [f"{path}: {marker!r}" for marker in MARKERS if marker in text]
        sources = [c.source for c in code_cells(read(path))] if path.suffix == ".ipynb" else [text]
        problems += [f"{path} imports the graders: {m.group(0)!r}"
                     for source in sources for m in GRADER_IMPORT.finditer(source)]
    return problems


def solution_code_leaks(folder: Path) -> list[str]:
    """Solution regions of the source, whole or line by line (lines that the
    source also shows outside its solutions, and comments, excepted)."""
    problems = []
    for name in NOTEBOOKS:
        source = read(SOURCE / name)
        shown = lines_outside_solutions(source)  # what the source itself shows students
        text = "\n".join(c.source for c in read(folder / name).cells)
        released_lines = {line.strip() for line in text.split("\n")}
        for region in solution_regions(source):
            block = "\n".join(region).strip()
            if block and block in text:
                problems.append(f"{folder / name}: a solution region shipped:\n{block}")
            for line in region:
                line = line.strip()
                if line and not line.startswith("#") and line not in shown and line in released_lines:
                    problems.append(f"{folder / name}: solution line {line!r}")
    return problems


def readable_text(path: Path) -> str:
    """A file's text as a person reads it: for a notebook, its cells' sources
    and text outputs (in the raw JSON a quote is escaped, \\")."""
    if path.suffix != ".ipynb":
        return path.read_text(encoding="utf-8", errors="replace")
    parts = []
    for cell in read(path).cells:
        parts.append(cell.source)
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts += [v for k, v in out.get("data", {}).items() if k.startswith("text/") and isinstance(v, str)]
    return "\n".join(parts)


def quiz_answer_leaks(folder: Path) -> list[str]:
    """``answer_qNN = "<right letter>"`` anywhere, in any spacing, quotes or case."""
    problems = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            text = readable_text(path)
            for q, letter in quiz_answers().items():
                if re.search(rf"answer_{q}\s*=\s*['\"]{re.escape(letter)}['\"]", text, re.I):
                    problems.append(f"{path}: the answer to {q}")
    return problems


def test_leak_finders_find_the_leaks_of_the_source(tmp_path):
    """The checks below are not vacuous: on the source itself they fire."""
    leaky = tmp_path / "leaky"
    shutil.copytree(SOURCE, leaky, ignore=rel.ignore_files)
    found = marker_and_import_leaks(leaky)
    assert any("BEGIN SOLUTION" in p for p in found) and any("BEGIN HIDDEN TESTS" in p for p in found)
    assert any("imports the graders" in p for p in found)
    assert solution_code_leaks(leaky)
    assert len(quiz_answer_leaks(leaky)) == len(quiz_answers())


def test_release_has_no_solutions_hidden_tests_or_grader_imports(fresh_release):
    for folder in release_dirs(fresh_release):
        assert not marker_and_import_leaks(folder)


def test_release_has_no_solution_code(fresh_release):
    for folder in release_dirs(fresh_release):
        assert not solution_code_leaks(folder)


def test_release_has_no_quiz_answers(fresh_release):
    assert quiz_answers()
    for folder in release_dirs(fresh_release):
        for path in folder.rglob("*"):
            if path.is_file():
                text = readable_text(path)
                for q, letter in quiz_answers().items():  # the literal form, spelled out
                    assert f'answer_{q} = "{letter}"' not in text, f"{path}: the answer to {q}"
        assert not quiz_answer_leaks(folder)


def test_one_run_equals_two_plain_nbgrader_runs(tmp_path, fresh_release):
    """The per-notebook stub is nbgrader's own ClearSolutions: two plain
    nbgrader passes, one per notebook with its own code_stub, give the same
    release (and the second pass keeps the first notebook)."""
    root = make_course(tmp_path / "plain")
    plain = "\n".join([
        'c = get_config()',
        'c.CourseDirectory.source_directory = "assignments"',
        'c.CourseDirectory.release_directory = "release"',
        'c.ClearSolutions.code_stub = {"python": %r}',
    ])
    stubs = {"attention": "# YOUR CODE HERE\nraise NotImplementedError()", "quiz": "# YOUR ANSWER HERE"}
    for notebook, stub in stubs.items():
        (root / "nbgrader_config.py").write_text(plain % stub + "\n")
        rel.run_nbgrader(["generate_assignment", ASSIGNMENT, "--notebook", notebook, "--force"], cwd=root)
    out = root / "release" / ASSIGNMENT
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in fresh_release.iterdir())
    for path in sorted(fresh_release.iterdir()):
        assert filecmp.cmp(path, out / path.name, shallow=False), path.name
    assert rel.gradebook_notebooks(root) == sorted(Path(n).stem for n in NOTEBOOKS)


def test_gradebook_knows_both_notebooks(course):
    assert rel.gradebook_notebooks(course) == sorted(Path(n).stem for n in NOTEBOOKS)


# --------------------------------------------------------------------------
# the release runs


def run_release_notebook(name: str, fresh_release: Path, jupyter_dir: Path, tmp_path: Path):
    """Execute a copy of the committed release (or, before the first
    ``make release``, the fresh one) top to bottom; any error fails."""
    folder = RELEASE if (RELEASE / name).is_file() else fresh_release
    scratch = tmp_path / ASSIGNMENT
    shutil.copytree(folder, scratch, ignore=rel.ignore_files)
    nb = read(scratch / name)
    return rel.execute_notebook(nb, scratch, jupyter_dir, timeout=300)


def text_of(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif "data" in out:
            parts.append(out.data.get("text/plain", ""))
    return "".join(parts)


def stderr_of(nb) -> list[str]:
    return [out.text for c in code_cells(nb) for out in c.outputs
            if out.output_type == "stream" and out.name == "stderr"]


def test_release_attention_runs_top_to_bottom(fresh_release, jupyter_dir, tmp_path):
    nb = run_release_notebook("attention.ipynb", fresh_release, jupyter_dir, tmp_path)
    checks = [c for c in code_cells(nb) if "selfcheck.check_" in c.source]
    assert len(checks) >= 20
    for cell in checks:
        assert "not implemented yet" in text_of(cell), (cell.source, text_of(cell))
    assert not stderr_of(nb)


def test_release_quiz_runs_top_to_bottom(fresh_release, jupyter_dir, tmp_path):
    nb = run_release_notebook("quiz.ipynb", fresh_release, jupyter_dir, tmp_path)
    checks = [c for c in code_cells(nb) if "quizcheck.check(" in c.source]
    assert len(checks) == len(quiz_answers())
    for cell in checks:
        assert "not answered yet" in text_of(cell), (cell.source, text_of(cell))
    assert not stderr_of(nb)


# --------------------------------------------------------------------------
# nbgrader's own workflow


def grade_cell_outputs(notebook: Path) -> dict[str, list]:
    nb = read(notebook)
    return {c.metadata["nbgrader"]["grade_id"]: c.outputs for c in code_cells(nb)
            if c.metadata.get("nbgrader", {}).get("grade")}


@pytest.mark.slow
def test_nbgrader_workflow_gives_full_marks_to_the_solution_and_zero_to_the_release(tmp_path, jupyter_dir,
                                                                                     course):
    # a copy of the generated course (its release/ and gradebook.db included)
    root = tmp_path / "course"
    shutil.copytree(course, root)
    exchange = tmp_path / "exchange"  # created by nbgrader, with the permissions it wants
    course_args = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=attention-test"]
    env = rel.kernel_env(jupyter_dir)
    # keep the user's own Jupyter/nbgrader configuration out of it
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "jupyter-config")
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "jupyter-data")

    def nbgrader(*args, cwd=root):
        return rel.run_nbgrader([*args, *course_args], cwd=cwd, env=env)

    nbgrader("release_assignment", ASSIGNMENT)

    students = {"solved": True, "blank": False}
    for student, solved in students.items():
        home = tmp_path / "students" / student
        home.mkdir(parents=True)
        nbgrader("fetch_assignment", ASSIGNMENT, cwd=home)
        fetched = home / ASSIGNMENT
        assert sorted(p.name for p in fetched.iterdir()) == sorted([*NOTEBOOKS, *rel.HELPERS])
        if solved:  # the source notebooks, solutions and all, as the student's work
            for name in NOTEBOOKS:
                shutil.copy2(SOURCE / name, fetched / name)
        # the student id is the OS user's, unless given (as a shared machine would)
        nbgrader("submit", ASSIGNMENT, f"--CourseDirectory.student_id={student}", cwd=home)

    nbgrader("collect", ASSIGNMENT)
    for student in students:
        assert (root / "submitted" / student / ASSIGNMENT / "attention.ipynb").is_file()
    proc = nbgrader("autograde", ASSIGNMENT)

    from nbgrader.api import Gradebook

    with Gradebook("sqlite:///" + str(root / "gradebook.db")) as gb:
        assignment = gb.find_assignment(ASSIGNMENT)
        assert sorted(nb.name for nb in assignment.notebooks) == sorted(Path(n).stem for n in NOTEBOOKS)
        max_score = assignment.max_score
        scores = {}
        for student in students:
            submission = gb.find_submission(ASSIGNMENT, student)
            scores[student] = submission.score
            cells = {(nb.name, g.name): g.score for nb in submission.notebooks for g in nb.grades}
            scores[student, "cells"] = cells

    points = sum(float(c.metadata["nbgrader"]["points"]) for name in NOTEBOOKS for c in code_cells(read(SOURCE / name))
                 if c.metadata.get("nbgrader", {}).get("grade"))
    assert max_score == pytest.approx(points) and points > 0

    # every grade cell scored through the value grade_part returned: none was
    # zeroed by an error or by output on stderr (nbgrader gives 0 for either)
    for student in students:
        for name in NOTEBOOKS:
            autograded = root / "autograded" / student / ASSIGNMENT / name
            grade_cells = [c for c in code_cells(read(autograded)) if c.metadata.get("nbgrader", {}).get("grade")]
            assert grade_cells, name
            for cell in grade_cells:  # nbgrader put the hidden tests back from the gradebook
                assert "grade_part(" in cell.source, cell.source
            for grade_id, outs in grade_cell_outputs(autograded).items():
                bad = [o for o in outs if o.output_type == "error"
                       or (o.output_type == "stream" and o.name == "stderr")]
                assert not bad, f"{student}: {name}/{grade_id}: nbgrader zeroes a grade cell with {bad}"
                assert any(o.output_type == "execute_result" for o in outs), f"{student}: {name}/{grade_id}"

    assert scores["solved"] == pytest.approx(max_score), (scores["solved", "cells"], proc.stdout, proc.stderr)
    assert scores["blank"] == 0, scores["blank", "cells"]
