"""What grading leaves behind: per submission Gradescope's results.json and a feedback page (with
pictures of what went wrong: figures.py), per class grades.csv and class_report.html (classreport.py),
a table on the terminal and the closing lines that say where everything is.

Files are written whole to a temporary name and renamed, so a run killed midway never leaves a
half-written report that looks finished; results.json is written last, since its presence marks
a submission as graded (see `core.batch.earlier_result`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..core.results import GradedSubmission
from .classreport import class_report_html
from .feedback import feedback_html
from .table import class_table, grades_csv

RESULTS_FILE = "results.json"
FEEDBACK_FILE = "feedback.html"
GRADES_FILE = "grades.csv"
CLASS_REPORT_FILE = "class_report.html"


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def write_submission(graded: GradedSubmission, out: Path) -> None:
    """feedback.html, then results.json, in out/<id>/."""
    folder = out / graded.id
    write_atomically(folder / FEEDBACK_FILE, feedback_html(graded))
    write_atomically(folder / RESULTS_FILE, json.dumps(graded.to_gradescope(), indent=1, ensure_ascii=False))


def write_class(graded: list[GradedSubmission], out: Path, kept: frozenset[str] = frozenset()) -> None:
    """grades.csv and class_report.html; `kept`: the ids of results taken from an earlier run."""
    write_atomically(out / GRADES_FILE, grades_csv(graded))
    write_atomically(out / CLASS_REPORT_FILE, class_report_html(graded, kept))


def where_reports_are(out: Path, graded: list[GradedSubmission], gradebook: str = "") -> str:
    """The closing lines of a run: where each kind of report is."""
    example = min((g.id for g in graded), default="<submission>")
    lines = [
        "Reports:",
        f"  feedback for each student:  {out / example / FEEDBACK_FILE}  (one folder per submission)",
        f"  Gradescope results:         {out / example / RESULTS_FILE}",
        f"  class table:                {out / GRADES_FILE}",
        f"  class report:               {out / CLASS_REPORT_FILE}  (open in a browser)",
    ]
    if gradebook:
        lines.append("  " + gradebook)
    return "\n".join(lines)


__all__ = ["write_atomically", "write_submission", "write_class", "where_reports_are", "class_table",
           "RESULTS_FILE", "FEEDBACK_FILE", "GRADES_FILE", "CLASS_REPORT_FILE"]
