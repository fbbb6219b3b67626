"""The student release and the solutions (``make release``).

* drift: regenerating gives the committed ``release/`` and ``solutions/``;
* the release leaks nothing: no solution, hidden test, grader import or quiz
  answer;
* the release runs top to bottom, every self-check saying "not implemented
  yet" / "not answered yet", and each grade cell failing with a short list of
  what is left (so nbgrader's Validate fails on the release and on a wrong
  quiz answer), while under ``nbgrader autograde`` that visible part is silent;
* what students see: names they can see (no lesson file names), symbols the
  DejaVu fonts draw, a timing study whose slope stays in the promised band;
* the public self-checks accept every module layout the contract (docs/contract.md) allows;
* nbgrader's own workflow (generate, release, fetch, submit, collect,
  autograde) gives the solution full marks and the untouched release 0, and
  the README's instructor commands work exactly as written.

Everything runs in temporary folders: the repository, its gradebook and the
user's Jupyter configuration are never touched.
"""

from __future__ import annotations

import filecmp
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

from tools import release as rel
from tools.course import make_course_root

pytestmark = pytest.mark.slow  # nbgrader builds the release and runs its notebooks

ROOT = rel.ROOT
ASSIGNMENT = rel.ASSIGNMENT
SOURCE = ROOT / "assignments" / ASSIGNMENT
RELEASE = ROOT / "release" / ASSIGNMENT
SOLUTIONS = ROOT / "solutions" / ASSIGNMENT
NOTEBOOKS = rel.source_notebooks(SOURCE)
HINT = "run `make release` (python -m tools.release) and commit release/ and solutions/"


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
    for helper in rel.HELPERS:  # as they ship: the source, quizcheck.py's quiz data filled in by the build
        assert (SOLUTIONS / helper).read_text(encoding="utf-8") == rel.helper_text(SOURCE, helper), (
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


def is_grade_cell(cell) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get("grade"))


def test_committed_solutions_pass_their_checks():
    """The answer key shows every self-check passing, every quiz answer right
    and every grade cell's ✔ summary with no error: what nbgrader's Validate
    counts as passing."""
    for name in NOTEBOOKS:
        nb = read(SOLUTIONS / name)
        assert not rel.failed_self_checks(nb), (
            f"solutions/{ASSIGNMENT}/{name}: {rel.failed_self_checks(nb)}: {HINT} (on a quiet machine)")
        for cell in code_cells(nb):
            if "selfcheck.check_" in cell.source:
                assert text_of(cell).lstrip().startswith("✔"), (name, cell.source, text_of(cell))
            if "quizcheck.check(" in cell.source:
                assert "right!" in text_of(cell), (name, cell.source, text_of(cell))
            if is_grade_cell(cell):
                summary = text_of(cell)
                assert summary.startswith("✔ ") and ("self-checks pass" in summary or "answers are right" in summary), (
                    name, summary)
                assert all(o.output_type == "stream" and o.name == "stdout" for o in cell.outputs), cell.outputs
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


def test_released_notebooks_open_unmodified(fresh_release, tmp_path):
    """JupyterLab marks a notebook modified when it writes metadata that differs from what the file holds:
    the kernel's language_info, as soon as the notebook connects to its kernel, and whatever nbformat would
    write differently. The release holds the language_info a kernel on this Python reports (the committed
    one, of the Python it was built with: the same but for the version), and reading and writing it with
    nbformat changes no byte."""
    from autograder.nbgrader.kernelinfo import kernel_language_info

    spec = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}  # ipykernel's own
    reported = kernel_language_info()
    for name in NOTEBOOKS:
        for path in (fresh_release / name, RELEASE / name):
            nb = read(path)
            assert nb.metadata["language_info"] == (reported if path.parent == fresh_release else
                                                    {**reported, "version": nb.metadata["language_info"]["version"]})
            assert re.fullmatch(r"3\.\d+\.\d+", nb.metadata["language_info"]["version"]), path
            assert nb.metadata["kernelspec"] == spec, path
            assert (nb.nbformat, nb.nbformat_minor) == (nbformat.current_nbformat, nbformat.current_nbformat_minor)
            assert all(cell.get("id") for cell in nb.cells), path
            again = tmp_path / f"{path.parent.parent.parent.name}-{name}"
            nbformat.write(nbformat.read(path, as_version=nbformat.NO_CONVERT), again)
            assert again.read_bytes() == path.read_bytes(), f"{path}: nbformat writes it otherwise: {HINT}"


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
    release (and the second pass keeps the first notebook). Both have the
    quiz's build step (QuizRelease, in its default mode) in front, and the
    kernel's language_info (KernelInfo) last."""
    root = make_course(tmp_path / "plain")
    plain = "\n".join([
        'from nbgrader.converters import GenerateAssignment',
        'from autograder.nbgrader.kernelinfo import KernelInfo',
        'from autograder.nbgrader.quizrelease import QuizRelease',
        'c = get_config()',
        'c.CourseDirectory.source_directory = "assignments"',
        'c.CourseDirectory.release_directory = "release"',
        'c.GenerateAssignment.preprocessors = [QuizRelease] + GenerateAssignment.class_traits()["preprocessors"].default() + [KernelInfo]',
        'c.ClearSolutions.code_stub = {"python": %r}',
    ])
    stubs = {"attention": "# YOUR CODE HERE\nraise NotImplementedError()", "quiz": "# YOUR ANSWER HERE"}
    for notebook, stub in stubs.items():
        (root / "nbgrader_config.py").write_text(plain % stub + "\n")
        rel.run_nbgrader(["generate_assignment", ASSIGNMENT, "--notebook", notebook, "--force"], cwd=root)
    out = root / "release" / ASSIGNMENT
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in fresh_release.iterdir())
    for path in sorted(fresh_release.iterdir()):
        assert filecmp.cmp(path, out / path.name, shallow=False), path.name  # helpers too: nbgrader's copy is ours
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


def grade_cell_errors(nb) -> dict[str, str]:
    """grade_id -> the error a grade cell shows ("" when none); any other cell's error fails."""
    errors = {}
    for cell in code_cells(nb):
        shown = [f"{o.ename}: {o.evalue}" for o in cell.outputs if o.output_type == "error"]
        if is_grade_cell(cell):
            errors[cell.metadata["nbgrader"]["grade_id"]] = "\n".join(shown)
        else:
            assert not shown, (cell.source, shown)
    return errors


def section_functions(part: str) -> list[str]:
    """The names a section's answer cells define, in notebook order."""
    prefix = f"{part}-"
    return [c.metadata["nbgrader"]["grade_id"][len(prefix):] for c in code_cells(read(SOURCE / "attention.ipynb"))
            if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith(prefix)]


def test_release_attention_runs_top_to_bottom(fresh_release, jupyter_dir, tmp_path):
    """Every cell runs (the grade cells may fail: they are tagged raises-exception),
    every self-check says "not implemented yet", and each grade cell fails with
    a short message naming its section and every function of it as not done."""
    nb = run_release_notebook("attention.ipynb", fresh_release, jupyter_dir, tmp_path)
    checks = [c for c in code_cells(nb) if "selfcheck.check_" in c.source]
    assert len(checks) >= 20
    for cell in checks:
        assert "not implemented yet" in text_of(cell), (cell.source, text_of(cell))
    assert not stderr_of(nb)
    errors = grade_cell_errors(nb)
    assert sorted(errors) == ["grade-heads", "grade-masks", "grade-positions", "grade-scaling", "grade-tiles",
                              "grade-timing"]
    for grade_id, error in errors.items():
        part = grade_id.removeprefix("grade-")
        title = selfcheck_module().SECTIONS[part][0]
        assert error.startswith(f"AssertionError: {title}: not finished\n  not done yet: "), error
        assert error.endswith("\n  (the self-check under each function says more)"), error
        assert max(len(line) for line in error.splitlines()[1:]) <= 76 and len(error) < 400, error
        for name in section_functions(part):
            assert name in error, (name, error)


def test_release_quiz_runs_top_to_bottom(fresh_release, jupyter_dir, tmp_path):
    nb = run_release_notebook("quiz.ipynb", fresh_release, jupyter_dir, tmp_path)
    checks = [c for c in code_cells(nb) if "quizcheck.check(" in c.source]
    assert len(checks) == len(quiz_answers())
    for cell in checks:
        assert "not answered yet" in text_of(cell), (cell.source, text_of(cell))
    assert not stderr_of(nb)
    errors = grade_cell_errors(nb)
    assert list(errors) == ["grade-quiz"]
    lines = errors["grade-quiz"].splitlines()
    assert lines[0] == "AssertionError: quiz: not finished" and lines[1].startswith("  not answered yet: q01, q02, ")
    assert lines[-1] == "  (the check under each question says more)" and len(lines) == 4, lines
    assert all(q in errors["grade-quiz"] for q in quiz_answers())


def test_grade_cells_tell_where_each_part_stands(fresh_release):
    """Each grade cell's visible part runs its section's summary before the
    hidden tests (which nbgrader removes from the release), and is tagged
    raises-exception so that Restart & Run All goes on past it."""
    for name, call in (("attention.ipynb", "selfcheck.what_is_left("), ("quiz.ipynb", "quizcheck.what_is_left(")):
        source_cells = [c for c in code_cells(read(SOURCE / name)) if is_grade_cell(c)]
        released = {c.metadata["nbgrader"]["grade_id"]: c for c in code_cells(read(fresh_release / name))
                    if is_grade_cell(c)}
        assert source_cells and len(released) == len(source_cells)
        for cell in source_cells:
            visible, hidden = cell.source.split("### BEGIN HIDDEN TESTS")
            assert call in visible and "assert not todo, todo" in visible, cell.source
            assert "grade_part(" in hidden
            assert "raises-exception" in cell.metadata.get("tags", [])
            shipped = released[cell.metadata["nbgrader"]["grade_id"]]
            assert shipped.source.strip() == visible.strip()
            assert "raises-exception" in shipped.metadata.get("tags", [])


# --------------------------------------------------------------------------
# nbgrader's own workflow


# --------------------------------------------------------------------------
# the public helpers, as students run them


def load_helper(name: str, folder: Path | None = None) -> ModuleType:
    """A fresh import of a public helper as it ships (as a student's kernel imports it): from ``folder``,
    or as the build makes it from the source (quizcheck.py's quiz data filled in, in the course's mode)."""
    path = (folder or SOURCE) / f"{name}.py"
    if folder is None and rel.helper_text(SOURCE, path.name) != path.read_text(encoding="utf-8"):
        import tempfile

        path = Path(tempfile.mkdtemp(prefix="built-helper-")) / path.name
        path.write_text(rel.helper_text(SOURCE, path.name), encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"_release_test_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def selfcheck_module() -> ModuleType:
    return load_helper("selfcheck")


def quizcheck_module() -> ModuleType:
    return load_helper("quizcheck")


def test_summaries_are_silent_while_nbgrader_autogrades(monkeypatch, capsys):
    """Under ``nbgrader autograde`` the grade cells' visible part runs nothing,
    prints nothing and passes: the hidden tests alone decide the score."""
    selfcheck, quizcheck = selfcheck_module(), quizcheck_module()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    assert all(selfcheck.what_is_left(part, {}) == "" for part in selfcheck.SECTIONS)
    assert quizcheck.what_is_left({}) == ""
    assert capsys.readouterr() == ("", "")
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")  # Validate: the last section's summary says it all
    assert all(selfcheck.what_is_left(part, {}) == "" for part in list(selfcheck.SECTIONS)[:-1])
    left = selfcheck.what_is_left(list(selfcheck.SECTIONS)[-1], {})
    assert left.startswith("Not finished: sections 1, 2, 3, 4, 5 and 6\n"), left
    assert "\n1. Masks: not finished\n  not defined (run its answer cell): causal_average" in left
    assert quizcheck.what_is_left({}).startswith("quiz: not finished\n  not answered yet: q01, q02")


def test_validate_lists_the_sections_not_finished_first(monkeypatch, capsys):
    """What the last grade cell says under Validate: the sections not finished on its first line, then
    what is left in each, every line short enough for Validate (which cuts them at 83 columns after its
    own "AssertionError: " on the first)."""
    selfcheck = selfcheck_module()
    monkeypatch.setenv("NBGRADER_EXECUTION", "validate")
    real = selfcheck._section_left
    done = {"scaling", "heads", "positions", "timing"}
    monkeypatch.setattr(selfcheck, "_section_left", lambda part, ns: "" if part in done else real(part, ns))
    left = selfcheck.what_is_left("tiles", {})
    lines = left.splitlines()
    assert lines[0] == "Not finished: sections 1 and 6", lines
    assert lines[1] == "  (below, what is left in each; the self-check under each function says more)"
    assert lines[2:4] == ["", "1. Masks: not finished"] and "6. Attention in tiles: not finished" in lines
    assert not any(title in left for part, (title, _) in selfcheck.SECTIONS.items() if part in done)
    assert "says more)" not in "\n".join(lines[2:])  # said once, at the top
    assert max(len(line) for line in lines) <= 80 and len("AssertionError: " + lines[0]) <= 83
    done.add("masks")
    assert selfcheck.what_is_left("tiles", {}).startswith("Not finished: section 6\n")
    done.add("tiles")
    assert selfcheck.what_is_left("tiles", {}) == ""
    assert capsys.readouterr().out == ""  # quietly: Validate shows no passing cell's output


def test_quiz_digests_are_those_of_the_hidden_key():
    """The self-check quizcheck.py's digests are generated from the key (sha256 of "<id>:<letter>:<SALT>"),
    one per question, and every question has an explanation of each option; in assignments/ it has none."""
    assert rel.quiz_build().mode == "self-check"  # the committed release's mode (docs/quiz.md, nbgrader_config.py)
    source = load_helper("quizcheck", SOURCE)
    assert (source.MODE, source.QUESTIONS, source.ANSWER_HASHES, source.EXPLANATIONS) == ("counted", (), {}, {})
    quizcheck = quizcheck_module()
    assert quizcheck.MODE == "self-check" and quizcheck.QUESTIONS == tuple(sorted(quiz_answers()))
    assert quizcheck.ANSWER_HASHES == {q: quizcheck._digest(q, letter) for q, letter in quiz_answers().items()}
    assert all(set(quizcheck.EXPLANATIONS[q]) == set(quizcheck.OPTIONS) for q in quiz_answers())
    assert set(quizcheck.EXPLANATIONS) == set(quiz_answers())


def test_the_introduction_lists_every_section_with_its_grade_cells_points():
    """The table at the top of attention.ipynb states each section's points: those of its grade cell."""
    nb = read(SOURCE / "attention.ipynb")
    table = dict(re.findall(r"^\| (\d)\. [^|]+\|[^|]+\| (\d+) \|$", nb.cells[0].source, re.M))
    grade_cells = [c.metadata["nbgrader"] for c in code_cells(nb) if is_grade_cell(c)]
    assert len(table) == len(grade_cells), table
    assert [int(points) for _, points in sorted(table.items())] == [m["points"] for m in grade_cells]


def test_quiz_summary_names_unanswered_malformed_and_wrong_answers(capsys):
    quizcheck = quizcheck_module()
    answers = {f"answer_{q}": letter for q, letter in quiz_answers().items()}
    assert quizcheck.what_is_left(answers) == ""
    assert capsys.readouterr().out == f"✔ quiz: all {len(answers)} answers are right\n"
    wrong = "a" if answers["answer_q03"] != "a" else "b"
    answers.update(answer_q01=None, answer_q02=" X ", answer_q03=wrong.upper())
    assert quizcheck.what_is_left(answers) == ("quiz: not finished\n  not answered yet: q01\n"
                                               "  not one of a-d: q02\n  not right yet (✘): q03\n"
                                               "  (the check under each question says more)")


MODULE_LAYOUTS = '''
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Config:
    d_model: int
    n_heads: int
    block_size: int = 128
    dropout: float = 0.0


class NanoStyle(nn.Module):
    """A causal mask registered as a buffer, dropout layers at 0, a dataclass config."""

    persistent = True

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.config = Config(d_model, n_heads)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(self.config.dropout)
        self.resid_dropout = nn.Dropout(self.config.dropout)
        size = self.config.block_size
        self.register_buffer("bias", torch.tril(torch.ones(size, size)).view(1, 1, size, size),
                             persistent=self.persistent)

    def forward(self, x):
        B, T, C = x.shape
        H = self.config.n_heads
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
        att = q @ k.transpose(-2, -1) / math.sqrt(k.size(-1))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.proj(y)), att


class NonPersistentBoolMask(NanoStyle):
    persistent = False


class ExtraParameter(NanoStyle):
    def __init__(self, d_model: int, n_heads: int):
        super().__init__(d_model, n_heads)
        self.gain = nn.Parameter(torch.ones(()))
'''


def test_self_check_accepts_every_module_layout_the_contract_allows(tmp_path, capsys):
    """Buffers of any name (persistent or not), dropout at 0 and a dataclass
    config are fine; a parameter besides qkv and proj is not."""
    path = tmp_path / "layouts.py"
    path.write_text(MODULE_LAYOUTS)
    spec = importlib.util.spec_from_file_location("layouts", path)
    layouts = importlib.util.module_from_spec(spec)
    sys.modules["layouts"] = layouts  # dataclasses look their module up
    try:
        spec.loader.exec_module(layouts)
        selfcheck = selfcheck_module()
        for name in ("NanoStyle", "NonPersistentBoolMask", "ExtraParameter"):
            selfcheck.check_causal_self_attention(getattr(layouts, name))
    finally:
        del sys.modules["layouts"]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("✔ NanoStyle: 16,640 parameters"), lines[0]
    assert lines[1].startswith("✔ NonPersistentBoolMask: "), lines[1]
    assert lines[2].startswith("✘ ExtraParameter: the module's parameters (16,641 numbers"), lines[2]
    assert "got gain, qkv.weight, qkv.bias, proj.weight, proj.bias. " in lines[2], lines[2]


def test_self_check_measures_memory_as_the_grader_does(capsys):
    """tiled_attention's self-check measures the memory the call uses with the graded check's sizes, bound and
    warm-up, so a student sees that verdict before submitting: the corpus's correct version passes, the one that
    builds the whole grid fails with the hint the grader gives."""
    from autograder.graders import test_tiles

    selfcheck = selfcheck_module()
    assert (selfcheck.MEMORY_T, selfcheck.MEMORY_D, selfcheck.MEMORY_BLOCK, selfcheck.MEMORY_HELD) == (
        test_tiles.MEMORY_T, test_tiles.MEMORY_D, test_tiles.MEMORY_BLOCK, test_tiles.MEMORY_HELD)
    assert test_tiles.WARMUP_KEYS == 2 * test_tiles.MEMORY_BLOCK  # the self-check's warm-up: two blocks of keys
    base = (ROOT / "tests" / "corpus" / "base.py").read_text()
    for patch in ("", (ROOT / "tests" / "corpus" / "buggy" / "tiles_whole_grid.py").read_text()):
        namespace: dict = {}
        exec(compile(base + "\n\n" + patch, "variant", "exec"), namespace)
        selfcheck.check_tiled_attention(namespace["tiled_attention"])
    correct, grid = capsys.readouterr().out.splitlines()
    assert correct.startswith("✔ tiled_attention: ") and "at T = 3,072 (at most 20 MiB)" in correct, correct
    assert grid.startswith("✘ tiled_attention: the memory tiled_attention uses at T = 3,072") and \
        grid.endswith("Likely mistake: hold one block of scores at a time"), grid


# --------------------------------------------------------------------------
# what students see


def dejavu_charmap() -> set[int]:
    """Code points drawn by DejaVu Sans or DejaVu Sans Mono, the fonts matplotlib
    ships and JupyterLab's text and code fall back to on a bare Linux."""
    import matplotlib
    from matplotlib.ft2font import FT2Font

    fonts = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    return set().union(*(FT2Font(str(fonts / name)).get_charmap() for name in ("DejaVuSans.ttf", "DejaVuSansMono.ttf")))


def student_folders(fresh_release: Path) -> list[Path]:
    return [fresh_release, SOLUTIONS]


def test_every_symbol_students_see_is_drawn_by_the_dejavu_fonts(fresh_release):
    covered = dejavu_charmap()
    assert ord("✔") in covered and ord("✘") in covered and ord("✅") not in covered  # the test can fail
    for folder in student_folders(fresh_release):
        for path in sorted(folder.iterdir()):
            missing = sorted({c for c in readable_text(path) if ord(c) > 127 and ord(c) not in covered})
            assert not missing, f"{path}: {[f'{c} U+{ord(c):04X}' for c in missing]} show as empty boxes"


def test_students_see_only_names_they_can_see(fresh_release):
    """No lesson file numbers (000, 001, ...) in anything a student reads."""
    internal = re.compile(r"\blessons? \d{3}\b|\b\d{3}_[0-9a-f]{16}\b")
    for folder in student_folders(fresh_release):
        for path in sorted(folder.iterdir()):
            found = internal.findall(readable_text(path))
            assert not found, f"{path}: {found}"


def nbgrader_validate(notebook: Path, jupyter_dir: Path, tmp_path: Path) -> str:
    """What ``nbgrader validate NOTEBOOK`` prints (the Validate button shows the same)."""
    env = rel.kernel_env(jupyter_dir)
    env["JUPYTER_CONFIG_DIR"] = str(tmp_path / "jupyter-config")
    env["JUPYTER_DATA_DIR"] = str(tmp_path / "jupyter-data")
    proc = rel.run_nbgrader(["validate", notebook.name], cwd=notebook.parent, env=env, check=False)
    return proc.stdout + proc.stderr


def copy_assignment(folder: Path, tmp_path: Path) -> Path:
    scratch = tmp_path / ASSIGNMENT
    shutil.copytree(folder, scratch, ignore=rel.ignore_files)
    return scratch


def test_validate_fails_on_the_untouched_release(fresh_release, jupyter_dir, tmp_path):
    """Validate shows each failed grade cell's code, then its error: one cell, the last section's, whose
    error is the plain list of the sections not finished, then what is left in each; no traceback."""
    scratch = copy_assignment(fresh_release, tmp_path)
    report = nbgrader_validate(scratch / "attention.ipynb", jupyter_dir, tmp_path)
    assert "VALIDATION FAILED ON 1 CELL(S)" in report, report
    assert report.count("AssertionError: ") == 1 and "Traceback" not in report and "Cell In[" not in report, report
    error = report.split("The error was:\n\n", 1)[1].splitlines()
    assert error[0] == "    AssertionError: Not finished: sections 1, 2, 3, 4, 5 and 6", report
    assert "not done yet: causal_average" in report and "6. Attention in tiles: not finished" in report, report
    assert not any(line.endswith("...") for line in error), report  # no line cut by Validate
    report = nbgrader_validate(scratch / "quiz.ipynb", jupyter_dir, tmp_path)
    assert "VALIDATION FAILED ON 1 CELL(S)" in report and "not answered yet: q01" in report, report
    assert report.split("The error was:\n\n", 1)[1].startswith("    AssertionError: quiz: not finished\n"), report


def test_validate_passes_the_quiz_key_and_fails_one_wrong_answer(jupyter_dir, tmp_path):
    scratch = copy_assignment(SOLUTIONS, tmp_path)
    quiz = scratch / "quiz.ipynb"
    report = nbgrader_validate(quiz, jupyter_dir, tmp_path)
    assert "Success! Your notebook passes all the tests." in report, report
    right = quiz_answers()["q03"]
    wrong = "a" if right != "a" else "b"
    nb = read(quiz)
    answer = [c for c in code_cells(nb) if f'answer_q03 = "{right}"' in c.source]
    assert len(answer) == 1
    answer[0].source = answer[0].source.replace(f'answer_q03 = "{right}"', f'answer_q03 = "{wrong}"')
    nbformat.write(nb, quiz)
    report = nbgrader_validate(quiz, jupyter_dir, tmp_path)
    assert "VALIDATION FAILED ON 1 CELL(S)" in report and "  not right yet (✘): q03\n" in report, report


# --------------------------------------------------------------------------
# the timing study


PROMISED_SLOPES = (1.7, 2.5)  # "slopes between about 1.7 and 2.5 are common", the notebook says
STUDY_RUNS = 3


def study_notebook(runs: int):
    """The answer key's setup and answer cells, then the timing study ``runs``
    times, with the thread count printed before and after."""
    nb = rel.solution_notebook(SOURCE / "attention.ipynb")
    meta = [c.metadata.get("nbgrader", {}) for c in nb.cells]
    keep = [c for c, m in zip(nb.cells, meta) if c.cell_type == "code" and (m.get("locked") and not m.get("grade")
                                                                              or m.get("solution"))]
    study = [c for c in code_cells(nb) if 'what="timing study"' in c.source]
    assert len(study) == 1
    def threads():
        return nbformat.v4.new_code_cell("print('threads', torch.get_num_threads())")

    cells = keep + [threads()] + [nbformat.v4.new_code_cell(study[0].source) for _ in range(runs)] + [threads()]
    return nbformat.v4.new_notebook(cells=cells, metadata=nb.metadata)


def test_timing_study_slope_stays_in_the_promised_band_run_after_run(jupyter_dir, tmp_path):
    text = "\n".join(c.source for c in read(SOURCE / "attention.ipynb").cells if c.cell_type == "markdown")
    assert "slopes between about %.1f and %.1f are common" % PROMISED_SLOPES in " ".join(text.split())
    scratch = copy_assignment(SOURCE, tmp_path)
    nb = rel.execute_notebook(study_notebook(STUDY_RUNS), scratch, jupyter_dir, timeout=300)
    printed = "\n".join(text_of(c) for c in code_cells(nb))
    slopes = [float(x) for x in re.findall(r"^fitted slope: (-?[\d.]+)$", printed, re.M)]
    assert len(slopes) == STUDY_RUNS, printed
    low, high = PROMISED_SLOPES
    assert all(low <= slope <= high for slope in slopes), f"slopes {slopes}, promised {PROMISED_SLOPES}:\n{printed}"
    before, after = re.findall(r"^threads (\d+)$", printed, re.M)
    assert before == after, "the study must put the thread count back"


# --------------------------------------------------------------------------
# the README's instructor commands, exactly as written


README = ROOT / "README.md"
INSTRUCTORS = "For instructors: a course in five steps"
COURSE_FOLDER = "attention-course"  # the README's course folder, in the instructor's home
# The project's environment: the checkout's, or (run from another worktree) the one running these tests.
VENV = ROOT / ".venv" if (ROOT / ".venv").is_dir() else Path(sys.prefix)


def readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end == -1 else text[start:end]


def shell_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", markdown, flags=re.S | re.M)


def instructor_steps() -> list[str]:
    """The README's five steps for instructors, one command block each, in order."""
    steps = shell_blocks(readme_section(INSTRUCTORS))
    assert len(steps) == 5, steps
    assert steps[0].startswith("make venv\n"), steps[0]
    assert "nbgrader release_assignment attention" in steps[1], steps[1]
    assert "nbgrader collect attention" in steps[2], steps[2]
    return steps


def fresh_shell(home: Path, user: str) -> dict[str, str]:
    """A login shell's environment on a fresh machine: no venv on PATH, no Jupyter config."""
    home.mkdir(parents=True, exist_ok=True)
    env = {"HOME": str(home), "USER": user, "LOGNAME": user, "PATH": "/usr/local/bin:/usr/bin:/bin",
           "LANG": "C.UTF-8", "JUPYTER_CONFIG_DIR": str(home / ".jupyter"),
           "JUPYTER_DATA_DIR": str(home / ".local" / "share" / "jupyter"),
           # as under `make test`: its nbgrader imports the checkout's package, whose tree another test watches
           "PYTHONDONTWRITEBYTECODE": "1"}
    if os.environ.get("PYTHONPATH"):  # a run from a snapshot of the project keeps pointing at it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def run_shell(script: str, cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(["bash", "-eu", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"in {cwd}:\n{script}\nfailed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout + proc.stderr


def checkout_with_venv(folder: Path) -> Path:
    """What the README's first step reads of this repository: nbgrader_config.py, assignments/ and a made
    .venv (its `make venv` has nothing to do there: this Makefile's venv target stands in for the real one,
    which would find the environment up to date)."""
    folder.mkdir(parents=True)
    shutil.copy2(ROOT / "nbgrader_config.py", folder / "nbgrader_config.py")
    shutil.copytree(ROOT / "assignments", folder / "assignments", ignore=rel.ignore_files)
    (folder / ".venv").symlink_to(VENV)
    (folder / "Makefile").write_text("venv:\n\t@echo the environment is made\n")
    return folder


def test_readme_instructor_commands_work_as_written(tmp_path):
    """The README's five steps, each block run as written in a fresh shell that has never seen the venv:
    step 1 in a checkout (nbgrader_config.py and assignments/ copied from this one), steps 2 to 5 from the
    instructor's home, with one student fetching and submitting after step 2."""
    steps = instructor_steps()
    students = readme_section("For students")
    student_commands = ["nbgrader fetch_assignment attention", "nbgrader submit attention"]
    assert all(f"`{command}`" in students for command in student_commands)

    teacher = tmp_path / "teacher"
    run_shell(steps[0], checkout_with_venv(tmp_path / "checkout"), fresh_shell(teacher, "teacher"))
    course = teacher / COURSE_FOLDER
    config = (course / "nbgrader_config.py").read_text(encoding="utf-8")
    course_id = re.search(r"^c\.CourseDirectory\.course_id = \"(.+?)\"", config, re.M).group(1)
    exchange = Path(re.search(r"^c\.Exchange\.root = \"(.+?)\"", config, re.M).group(1))
    assert exchange.is_dir() and exchange.is_relative_to(teacher), exchange
    secret = course / "secret.txt"
    assert len(secret.read_text().strip()) == 32 and secret.stat().st_mode & 0o077 == 0
    run_shell(steps[0], tmp_path / "checkout", fresh_shell(teacher, "teacher"))  # once more: the secret stays
    assert (course / "secret.txt").read_text() == secret.read_text()

    run_shell(steps[1], teacher, fresh_shell(teacher, "teacher"))
    assert rel.gradebook_notebooks(course) == sorted(Path(n).stem for n in NOTEBOOKS)

    # a student on the same machine, whose nbgrader knows the course and the exchange
    home = tmp_path / "ada"
    env = fresh_shell(home, "ada")
    (home / "nbgrader_config.py").write_text("\n".join([
        "c = get_config()",
        f"c.CourseDirectory.course_id = {course_id!r}",
        f"c.Exchange.root = {str(exchange)!r}",
        "c.CourseDirectory.student_id = 'ada'  # on a hub, the student's own login name",
    ]) + "\n")
    run_shell(f". {VENV / 'bin' / 'activate'}\n" + "\n".join(student_commands), home, env)

    for step in steps[2:]:
        run_shell(step, teacher, fresh_shell(teacher, "teacher"))
    assert (course / "submitted" / "ada" / ASSIGNMENT / "attention.ipynb").is_file()
    assert (course / "grading" / "ada" / "results.json").is_file()
    assert "ada" in (course / "grades.csv").read_text()
    assert (course / "feedback" / "ada" / ASSIGNMENT / "attention.html").is_file()
    assert list(exchange.glob("*/feedback/*.html")), "release_feedback put nothing in the exchange"

