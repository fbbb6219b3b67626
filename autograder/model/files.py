"""The one file name that both the grading and the reports rely on, and how every report is written."""

from __future__ import annotations

import os
from pathlib import Path

RESULTS_FILE = "results.json"  # Gradescope's name; its presence marks a submission as graded (batch.earlier_result)


def write_atomically(path: Path, text: str) -> None:
    """`text` into `path` through a temporary name and a rename: a run killed midway never leaves a
    half-written file that looks finished."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
