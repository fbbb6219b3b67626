"""Regenerate the student release and the solutions (``make release``).

    python -m tools.release [--root DIR] [--skip-solutions]

* each part's points, set once by its grader's checks (``autograder/graders/test_<part>.py``), are
  written first into the source notebooks' grade cells and table of sections, and the hints of the
  catalogue (``autograder/hints.py``) into ``docs/mistakes.md`` and the students' ``selfcheck.py``;
* ``release/attention/``: the student version, written by nbgrader itself
  (``nbgrader generate_assignment attention --force``, configured by
  ``nbgrader_config.py``) from ``assignments/attention/``: solutions replaced
  by stubs, hidden tests removed, outputs cleared, plus the public helpers
  ``selfcheck.py`` and ``quizcheck.py``. It also records both notebooks and
  their grade cells (hidden tests included) in the course's ``gradebook.db``,
  which ``nbgrader autograde`` needs.
* ``solutions/attention/``: the answer keys for after the deadline: the source
  notebooks with their solutions, hidden-test regions removed by nbgrader's
  ``ClearHiddenTests``, executed top to bottom (outputs and plots included) in
  a scratch copy of the assignment folder, plus the same helpers.

Both are committed build outputs; ``tests/test_release.py`` fails when they
drift from ``assignments/``.

The per-notebook code stub that ``nbgrader_config.py`` plugs into nbgrader is
``autograder.nbgrader.stubs.ClearSolutionsPerNotebook``; the quiz's build (its mode,
self-check or counted, and its option order) is ``autograder.nbgrader.quizrelease.QuizRelease``,
configured there too (``c.QuizRelease.mode``, ``c.QuizRelease.shuffle``): it writes the released
``quizcheck.py`` and the answer keys get the same. With ``shuffle`` on, ``$AUTOGRADER_SECRET``
must be set (to the secret the class is graded with). A counted release that would hold key
material is refused.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable

from autograder.assignment import ASSIGNMENT, CHECKOUT_ROOT
from autograder.assignment import PUBLIC_HELPERS as HELPERS  # they ship next to the notebooks; no other .py may

if CHECKOUT_ROOT is None:
    raise SystemExit("tools/ work in a checkout of the project, not in an installed copy")
ROOT = CHECKOUT_ROOT

SOLUTION_TIMEOUT_S = 900  # per cell, when executing the solutions


# --------------------------------------------------------------------------
# helpers shared with the tests


def say(message: str) -> None:
    print(message, flush=True)


def shown(path: Path) -> str:
    """``path`` relative to the current folder when it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def ignored_patterns(course_root: Path = ROOT) -> list[str]:
    """The file patterns the course never copies anywhere: nbgrader_config.py's CourseDirectory.ignore."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    return list(config.CourseDirectory.ignore)


def ignore_files(_dir: str, names: Iterable[str]) -> set[str]:
    """``shutil.copytree`` ignore function for the course's ignored patterns."""
    import fnmatch

    patterns = ignored_patterns()
    return {n for n in names if any(fnmatch.fnmatch(n, pattern) for pattern in patterns)}


def write_venv_kernelspec(folder: Path, name: str = "python3") -> Path:
    """Write a kernelspec ``name`` that runs *this* Python (the venv's).

    Returns the folder to put first on ``JUPYTER_PATH`` (its ``kernels/``
    holds the spec), so that notebooks asking for ``python3`` get a kernel in
    which ``autograder`` and ``attention_ref`` are importable, whatever
    kernels the user has installed elsewhere. Touches nothing outside
    ``folder``.
    """
    from ipykernel.kernelspec import write_kernel_spec

    spec_dir = folder / "kernels" / name
    if spec_dir.exists():
        shutil.rmtree(spec_dir)
    spec_dir.parent.mkdir(parents=True, exist_ok=True)
    # ipykernel's own spec (argv[0] = sys.executable), as `ipykernel install` writes
    write_kernel_spec(spec_dir)
    return folder


def kernel_env(jupyter_path: Path | None = None) -> dict[str, str]:
    """The environment for kernels and nbgrader subprocesses."""
    env = dict(os.environ)
    # nbgrader runs tools of its environment (alembic) by name: put this
    # Python's bin folder (the venv's) first, even when it is not activated
    bindir = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([bindir] + [p for p in env.get("PATH", "").split(os.pathsep) if p and p != bindir])
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ next to the helpers
    env["PYTHONHASHSEED"] = "0"
    env.pop("MPLBACKEND", None)  # the notebook's inline backend, always
    if jupyter_path is not None:
        env["JUPYTER_PATH"] = os.pathsep.join(
            [str(jupyter_path)] + [p for p in env.get("JUPYTER_PATH", "").split(os.pathsep) if p]
        )
    return env


def run_nbgrader(args: list[str], cwd: Path, env: dict[str, str] | None = None,
                 check: bool = True) -> subprocess.CompletedProcess:
    """Run ``nbgrader ARGS`` with this Python in ``cwd`` (which holds the
    ``nbgrader_config.py`` to use); raise with nbgrader's log on failure."""
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=cwd, env=env if env is not None else kernel_env(),
        capture_output=True, text=True,
    )
    if check and proc.returncode != 0:
        raise RuntimeError(
            f"nbgrader {' '.join(args)} failed (exit {proc.returncode}) in {cwd}:\n"
            f"{proc.stdout}\n{proc.stderr}"
        )
    return proc


# --------------------------------------------------------------------------
# the release (nbgrader)


def write_grader_points(source_dir: Path) -> list[str]:
    """Each part's points, from its grader's checks (their one place), written into the source notebooks'
    grade cells and table of sections, which nbgrader's build then checks (autograder.nbgrader.points);
    the notebooks changed."""
    import nbformat

    from autograder.graders.points import grader_points
    from autograder.nbgrader.points import with_grader_points

    points, changed = grader_points(), []
    for name in source_notebooks(source_dir):
        path = Path(source_dir) / name
        nb = nbformat.read(path, as_version=4)
        if with_grader_points(nb, path.stem, points):
            path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
            changed.append(name)
    return changed


def generate_release(course_root: Path, assignment: str = ASSIGNMENT) -> Path:
    """``nbgrader generate_assignment`` in ``course_root``; returns the release
    folder. The old release folder is removed first, so nothing stale stays."""
    course_root = Path(course_root)
    release = course_root / "release" / assignment
    if release.exists():
        shutil.rmtree(release)
    run_nbgrader(["generate_assignment", assignment, "--force"], cwd=course_root)  # it copies the helpers as they are
    check_release_files(release, source_notebooks(course_root / "assignments" / assignment))
    from autograder.nbgrader.quizrelease import counted_release_leaks

    leaks = counted_release_leaks(release)  # a counted quiz ships no key material: refuse one that would
    if leaks:
        raise RuntimeError("the counted quiz's release holds key material:\n  " + "\n  ".join(leaks))
    return release


def quiz_build(course_root: Path = ROOT):
    """The quiz's build settings (mode, shuffle) of ``course_root``'s nbgrader_config.py: the same
    QuizRelease that nbgrader runs (autograder.nbgrader.quizrelease)."""
    from autograder.nbgrader.quizrelease import settings

    return settings(Path(course_root))


def helper_text(source_dir: Path, helper: str, build=None) -> str:
    """A public helper as it ships: its source as it is, except quizcheck.py, whose block of quiz
    data the quiz build fills in (as nbgrader's QuizRelease writes it into the release)."""
    from autograder import quiz
    from autograder.graders.quiz_key import ANSWERS
    from autograder.nbgrader.quizrelease import HELPER, built_quizcheck

    text = (Path(source_dir) / helper).read_text(encoding="utf-8")
    if helper != HELPER:
        return text
    build = build if build is not None else quiz_build(Path(source_dir).parents[1])
    return built_quizcheck(text, build.mode, quiz.option_orders(ANSWERS, build.secret()))


def source_notebooks(source_dir: Path) -> list[str]:
    """The notebooks of the assignment (file names, sorted)."""
    return sorted(p.name for p in Path(source_dir).glob("*.ipynb"))


def check_release_files(release: Path, notebooks: Iterable[str]) -> None:
    """The release holds the notebooks and the public helpers, nothing else
    that runs, and no solution or hidden-test marker."""
    problems = []
    for name in [*notebooks, *HELPERS]:
        if not (release / name).is_file():
            problems.append(f"{name} is missing")
    for path in sorted(release.rglob("*")):
        rel = path.relative_to(release).as_posix()
        if path.is_dir():
            if path.name == "__pycache__":
                problems.append(f"{rel}/ should not ship")
            continue
        if path.suffix in (".py", ".pyc") and rel not in HELPERS:
            problems.append(f"{rel} would ship to students (only {', '.join(HELPERS)} may)")
        if path.suffix in (".py", ".ipynb"):
            text = path.read_text(encoding="utf-8")
            for marker in ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS"):
                if marker in text:
                    problems.append(f"{rel} contains {marker!r}")
    if problems:
        raise RuntimeError("bad release in %s:\n  %s" % (release, "\n  ".join(problems)))


def gradebook_notebooks(course_root: Path, assignment: str = ASSIGNMENT) -> list[str]:
    """The notebooks the course's gradebook knows for ``assignment``."""
    from nbgrader.api import Gradebook

    url = "sqlite:///" + str(Path(course_root) / "gradebook.db")
    with Gradebook(url) as gb:
        return sorted(nb.name for nb in gb.find_assignment(assignment).notebooks)


# --------------------------------------------------------------------------
# the solutions (nbgrader's ClearHiddenTests + nbclient)


def solution_notebook(path: Path, build=None):
    """The source notebook with its hidden-test regions removed (nbgrader's
    ClearHiddenTests, which also checks they are all in grade cells) and its
    outputs cleared; the quiz built as its release is (``build``: the course's
    QuizRelease, by default that of the course root holding ``path``), so the
    answer key shows the options, and names them, as students see them."""
    import nbformat
    from nbgrader.preprocessors import ClearHiddenTests

    from autograder import quiz
    from autograder.graders.quiz_key import ANSWERS
    from autograder.nbgrader.quizrelease import built_notebook

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    nb, _ = ClearHiddenTests().preprocess(nb, {})
    if path.stem == quiz.NOTEBOOK:
        build = build if build is not None else quiz_build(path.resolve().parents[2])
        nb = built_notebook(nb, build.mode, quiz.option_orders(ANSWERS, build.secret()))
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        cell.metadata.pop("execution", None)
    return nb


def execute_notebook(nb, cwd: Path, kernel_dir: Path, *, timeout: int = SOLUTION_TIMEOUT_S,
                     allow_errors: bool = False):
    """Execute ``nb`` top to bottom with nbclient in ``cwd``, with the kernel
    spec in ``kernel_dir`` (see ``write_venv_kernelspec``). Raises
    ``nbclient.exceptions.CellExecutionError`` when a cell fails, unless
    ``allow_errors``."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    ksm = KernelSpecManager(kernel_dirs=[str(Path(kernel_dir) / "kernels")], ensure_native_kernel=False)
    km = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=ksm)
    if "transport_encryption" in km.traits():  # jupyter_client >= 8.10: no plain-TCP warning
        km.transport_encryption = "auto"
    client = NotebookClient(
        nb, km=km, timeout=timeout, allow_errors=allow_errors, record_timing=False, coalesce_streams=True,
        resources={"metadata": {"path": str(cwd)}},
    )
    client.execute(cwd=str(cwd), env=kernel_env(kernel_dir), cleanup_kc=True)
    return nb


def normalise_outputs(nb, scratch: Path, replacement: str = ".") -> None:
    """Make executed output independent of where and when it ran: the scratch
    folder's path becomes ``replacement``; no timing metadata."""
    patterns = sorted({str(scratch), os.path.realpath(scratch)}, key=len, reverse=True)

    def clean(text: Any) -> Any:
        if isinstance(text, list):
            return [clean(t) for t in text]
        if isinstance(text, str):
            for p in patterns:
                text = text.replace(p, replacement)
        return text

    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = clean(output["text"])
            if "traceback" in output:
                output["traceback"] = clean(output["traceback"])
            for mime, value in (output.get("data") or {}).items():
                if mime.startswith("text/") or mime == "application/json":
                    output["data"][mime] = clean(value)


def failed_self_checks(nb) -> list[str]:
    """The lines of self-check output that report a failure (selfcheck.py
    prints them with a ✘). The timing checks can fail on a busy machine: then
    run ``make release`` again on a quieter one."""
    lines = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                lines += [line for line in output.text.splitlines() if line.lstrip().startswith("✘")]
    return lines


def build_solutions(source_dir: Path, out_dir: Path, notebooks: Iterable[str] | None = None, build=None) -> Path:
    """Write ``out_dir``: executed solution notebooks and the helpers, the quiz built by ``build``
    (the course's QuizRelease by default) as its release is."""
    import nbformat

    source_dir, out_dir = Path(source_dir), Path(out_dir)
    build = build if build is not None else quiz_build(source_dir.resolve().parents[1])
    if notebooks is None:
        notebooks = source_notebooks(source_dir)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    helpers = {helper: helper_text(source_dir, helper, build) for helper in HELPERS}
    with tempfile.TemporaryDirectory(prefix="release-solutions-") as tmp:
        tmp = Path(tmp)
        kernel_dir = write_venv_kernelspec(tmp / "jupyter")
        for name in notebooks:
            # a fresh scratch copy of the assignment folder per notebook, with the helpers as they ship
            scratch = tmp / f"run-{Path(name).stem}" / source_dir.name
            shutil.copytree(source_dir, scratch, ignore=ignore_files)
            for helper, text in helpers.items():
                (scratch / helper).write_text(text, encoding="utf-8")
            nb = solution_notebook(source_dir / name, build)
            start = time.perf_counter()
            say(f"solutions: executing {name} (solutions kept, hidden tests removed) ...")
            execute_notebook(nb, scratch, kernel_dir)
            normalise_outputs(nb, scratch)
            nbformat.write(nb, out_dir / name)
            say(f"solutions:   wrote {shown(out_dir / name)} ({time.perf_counter() - start:.1f} s)")
            for line in failed_self_checks(nb):
                say(f"solutions:   WARNING: a self-check fails on the solution: {line}")
    for helper, text in helpers.items():  # as nbgrader's build puts them into the release: one text, whoever copies it
        (out_dir / helper).write_text(text, encoding="utf-8")
        say(f"solutions:   wrote {shown(out_dir / helper)}")
    return out_dir


# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.release", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT,
                        help="course root holding nbgrader_config.py and assignments/ (default: the project)")
    parser.add_argument("--skip-solutions", action="store_true", help="regenerate release/ only")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    source = root / "assignments" / ASSIGNMENT
    if not (root / "nbgrader_config.py").is_file() or not source.is_dir():
        parser.error(f"{root} has no nbgrader_config.py or no assignments/{ASSIGNMENT}/")
    start = time.perf_counter()

    for name in write_grader_points(source):
        say(f"release: each part's points, from its grader's checks, written into {shown(source / name)}")
    if root == ROOT:  # the project's own checkout: its docs and the students' selfcheck.py copy the hints
        from .hints import write_hint_copies

        for path in write_hint_copies(root):
            say(f"release: the hints of autograder/hints.py written into {shown(path)}")
    say(f"release: nbgrader generate_assignment {ASSIGNMENT} --force (course root {root})")
    try:
        release = generate_release(root)
    except RuntimeError as exc:
        say(f"release: FAILED\n{exc}")
        return 1
    for path in sorted(release.iterdir()):
        say(f"release:   wrote {shown(path)}")
    say(f"release:   {shown(root / 'gradebook.db')} knows notebooks: {', '.join(gradebook_notebooks(root))}")

    failures = 0
    if not args.skip_solutions:
        out = build_solutions(source, root / "solutions" / ASSIGNMENT)
        import nbformat

        failures = sum(len(failed_self_checks(nbformat.read(out / name, as_version=4)))
                       for name in source_notebooks(source))
    say(f"done in {time.perf_counter() - start:.1f} s")
    if failures:
        say(f"ERROR: {failures} self-check(s) fail on the solutions (see the warnings above); "
            "the timing checks can fail on a busy machine: run `make release` again on a quieter one")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
