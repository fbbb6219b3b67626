"""Feedback through nbgrader's own path: `<exchange>/<course>/feedback/<hash>.html`, as `nbgrader
release_feedback` writes it (nbgrader/exchange/default/release_feedback.py), so that `nbgrader fetch_feedback`
and JupyterLab's Assignments tab ("Fetch Feedback") find it for the student who submitted, and for no one else.

The file's name is nbgrader's hash of the submission's secret (submission_secret.txt, which only the submitter's
cache and the exchange's inbound copy hold) and the notebook's name; a submission from before nbgrader wrote
secrets takes its legacy hash of the notebook and its unique key. Both are nbgrader's own functions
(`nbgrader.utils.notebook_hash`, `make_unique_key`), called here, never re-implemented. feedback/ is made as
release_feedback makes it (0711: others may open a file they can name, not list the folder); each file is
written through a temporary name and a rename, as release_feedback does, readable (0644) by whoever knows its
name. A submission's several notebooks each get the same page: the whole submission's feedback.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .exchange import Notebooks

FEEDBACK_DIR_MODE = stat.S_IRUSR | stat.S_IWUSR | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH  # release_feedback's 0711
FEEDBACK_FILE_MODE = 0o644


def targets(course: str, assignment: str, student: str, notebooks: Notebooks, staged: Path) -> list[str]:
    """The hashes nbgrader names this submission's feedback files by, one per notebook; `staged` holds the
    notebooks as read (for the legacy hash, which reads the notebook's bytes)."""
    from nbgrader.utils import make_unique_key, notebook_hash

    hashes = []
    for name in sorted(notebooks.files):
        notebook_id = name[: -len(".ipynb")]
        if notebooks.secret:
            hashes.append(notebook_hash(secret=notebooks.secret, notebook_id=notebook_id))
        else:
            key = make_unique_key(course, assignment, notebook_id, student, notebooks.timestamp)
            hashes.append(notebook_hash(path=str(staged / name), unique_key=key))
    return hashes


def folder(exchange: Path, course: str) -> Path:
    return exchange / course / "feedback"


def write(exchange: Path, course: str, hashes: list[str], html: str) -> list[Path]:
    """`html` as each of the feedback files `hashes`; returns their paths."""
    out = folder(exchange, course)
    if not out.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        os.chmod(out, FEEDBACK_DIR_MODE)
    written = []
    for checksum in hashes:
        if not checksum.isalnum():
            continue  # nbgrader's hashes are hex digits; anything else is no file name of ours
        final = out / f"{checksum}.html"
        temporary = out / f"{checksum}-tmp.html"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, FEEDBACK_FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(html)
        os.chmod(temporary, FEEDBACK_FILE_MODE)
        os.replace(temporary, final)
        written.append(final)
    return written
