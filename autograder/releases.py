"""The release a run grades against: what the students fetched.

By default it is the grader's own copy (`assignment.release_folder()`). A run that grades an nbgrader
course (`grade --nbgrader`) grades against the course's own build instead, its release folder, so that
an instructor who changed the course's copy (a setup cell, the quiz's mode) is graded as they built it.
The run reads that folder once (`read`) and passes the `Release` down as a value: to the reading of each
submission, to the graders' session (`GradingPlugin.release`), and to every worker as data
(`WorkerSettings.release`): a Dask worker on another machine never needs the course's folders. Nothing in
this module remembers which release a run uses; a caller that gives none gets the grader's own (`or_own`).

What comes from it: the setup cells that run before a student's cells (model.submission), the public
helpers every sandbox finds beside the code it runs, the quiz's build record and questions
(graders/test_quiz.py), the release's text the similarity report leaves out, and the digest that says
whether an earlier result still stands (pool.batch).

This module imports nothing of the reference or the graders.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Mapping

from . import assignment

MAX_FILE_BYTES = 8 << 20  # a release's notebook or helper (the largest is about 100 KB)


@dataclass(frozen=True, eq=False)  # compared and cached by identity: one object per release read
class Release:
    """The files of one release: its notebooks and public helpers, by file name."""

    files: Mapping[str, bytes]
    where: str  # where it was read, for messages

    def notebook(self, name: str) -> bytes | None:
        """The notebook `name` (without .ipynb), or None when this release has none."""
        return self.files.get(f"{name}.ipynb")

    @cached_property
    def digest(self) -> str:
        """What a result graded against this release depends on (pool.batch's fingerprint)."""
        found = hashlib.sha256()
        for name in sorted(self.files):
            found.update(name.encode() + b"\0" + self.files[name] + b"\0")
        return found.hexdigest()


def file_names() -> tuple[str, ...]:
    """The files a release is made of, for grading: the notebooks, then the public helpers."""
    return (*(f"{notebook}.ipynb" for notebook in assignment.NOTEBOOKS), *assignment.PUBLIC_HELPERS)


def read(folder: Path, where: str | None = None) -> Release:
    """The release in `folder`; FileNotFoundError names what is missing (every notebook must be there; a
    helper that is not is left out, as the grader's own copy would leave it)."""
    folder = Path(folder)
    files: dict[str, bytes] = {}
    for name in file_names():
        path = folder / name
        if not path.is_file():
            if name.endswith(".ipynb"):
                raise FileNotFoundError(f"{path} is missing")
            continue
        if path.stat().st_size > MAX_FILE_BYTES:
            raise FileNotFoundError(f"{path} is over {MAX_FILE_BYTES >> 20} MiB: not a release's file")
        files[name] = path.read_bytes()
    return Release(files, where or str(folder))


@lru_cache(maxsize=1)
def _grader_release(folder: str) -> Release:
    return read(Path(folder), f"the grader's release ({folder})")


def grader_release() -> Release:
    """The grader's own copy of the release (installed with it, or release/ of a checkout)."""
    return _grader_release(str(assignment.release_folder()))


def or_own(release: Release | None) -> Release:
    """`release`, or the grader's own copy where a caller gives none."""
    return release if release is not None else grader_release()
