"""An nbgrader course as nbgrader itself reads it: its configuration, its collected submissions and
what its gradebook knows of the assignment."""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..versions import patches_apply


class CourseError(Exception):
    """The current folder is not an nbgrader course ready to grade (no gradebook, assignment not
    generated, ...)."""


@dataclass
class NbgraderCourse:
    """An nbgrader course root and one of its assignments."""

    root: Path
    assignment: str
    app: Any = field(repr=False)  # the nbgrader AutogradeApp that holds the course's configuration

    @property
    def coursedir(self) -> Any:
        return self.app.coursedir

    @property
    def db_url(self) -> str:
        return self.coursedir.db_url

    def submissions(self) -> dict[str, Path]:
        """student id -> ``submitted/<student>/<assignment>/`` folder."""
        pattern = self.coursedir.format_path(self.coursedir.submitted_directory, "*", self.assignment)
        found = sorted(Path(p) for p in glob.glob(pattern) if os.path.isdir(p))
        return {p.parent.name: p for p in found}

    def submissions_pattern(self) -> str:
        return self.coursedir.format_path(self.coursedir.submitted_directory, "*", self.assignment)

    def release_folder(self) -> Path:
        """The course's own build of the assignment (`nbgrader generate_assignment` writes it)."""
        return Path(self.coursedir.format_path(self.coursedir.release_directory, ".", self.assignment))

    def source_folder(self) -> Path:
        """The course's copy of the assignment's source, which its build reads."""
        return Path(self.coursedir.format_path(self.coursedir.source_directory, ".", self.assignment))

    def grade_cell_points(self) -> dict[str, float]:
        """grade cell name -> its points, as the gradebook recorded them when the release was built."""
        from nbgrader.api import Gradebook

        with Gradebook(self.db_url, self.coursedir.course_id) as gb:
            found = gb.find_assignment(self.assignment)
            return {c.name: float(c.max_score) for nb in found.notebooks for c in nb.grade_cells}

    def notebooks(self) -> dict[str, list[str]]:
        """notebook name -> its grade cells, as the gradebook knows them."""
        from nbgrader.api import Gradebook, MissingEntry

        try:
            with Gradebook(self.db_url, self.coursedir.course_id) as gb:
                assignment = gb.find_assignment(self.assignment)
                return {nb.name: sorted(c.name for c in nb.grade_cells) for nb in assignment.notebooks}
        except MissingEntry:
            raise CourseError(
                f"the gradebook ({self.db_url}) has no assignment {self.assignment!r}: run "
                f"`nbgrader generate_assignment {self.assignment}` in {self.root} first") from None


def _without_iri_grammars() -> None:
    """nbgrader imports jsonschema, which imports ``rfc3987_syntax`` when it is installed, and that
    builds some forty parsers at import (most of a grading run's start-up) for the "iri"
    string formats of JSON schemas, which nothing in a run checks. Marked as absent, it is not
    imported, and jsonschema goes without those two formats (as it does when it is not installed); only
    with the jsonschema this was written for (`versions.WRITTEN_FOR`)."""
    if "jsonschema" not in sys.modules and patches_apply("jsonschema"):
        sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # typeshed: modules only; None is
        # the import system's documented "not importable" mark


def open_course(assignment: str, root: Path | None = None) -> NbgraderCourse:
    """The nbgrader course whose root is ``root`` (default: the current folder), configured as
    ``nbgrader`` itself would be there."""
    _without_iri_grammars()
    from nbgrader.apps import AutogradeApp

    root = Path(root or Path.cwd()).resolve()
    if not (root / "nbgrader_config.py").is_file():
        raise CourseError(f"{root} is not an nbgrader course root (no nbgrader_config.py): "
                          "run the grader there, or give paths instead of --nbgrader")
    saved_path = list(sys.path)
    try:
        app = AutogradeApp()
        app.log_level = "ERROR"  # nbgrader warns of no config in the current folder, which it is told not to read
        app.load_cwd_config = False  # the course's own file, given as its root below: never the caller's folder
        app.initialize([], root=str(root))
        app.log_level = "WARN"
    except SystemExit as exc:  # traitlets exits on a broken configuration
        raise CourseError(f"nbgrader could not read the configuration of {root} (exit {exc.code})") from None
    finally:
        sys.path[:] = saved_path  # nbgrader puts the current folder first on sys.path
    app.coursedir.assignment_id = assignment
    course = NbgraderCourse(Path(app.coursedir.root).resolve(), assignment, app)
    db_url = course.db_url
    db_file = Path(db_url[len("sqlite:///"):]) if db_url.startswith("sqlite:///") else None
    if db_file is not None and not (db_file if db_file.is_absolute() else root / db_file).is_file():
        raise CourseError(f"{root} has no gradebook ({db_url}): run "
                          f"`nbgrader generate_assignment {assignment}` there first")
    # nbgrader runs tools of its environment by name (alembic, when it opens a
    # gradebook): this Python's bin folder first, even when it is not activated
    bindir = str(Path(sys.executable).parent)
    os.environ["PATH"] = os.pathsep.join([bindir] + [p for p in os.environ.get("PATH", "").split(os.pathsep)
                                                     if p and p != bindir])
    course.notebooks()  # fails early, with what to do, when the assignment was never generated
    return course
