"""What grading leaves behind: per submission Gradescope's results.json and a feedback page (with
pictures of what went wrong: figures.py), per class grades.csv, the item statistics (items.py) and
class_report.html (classreport.py), a table on the terminal and the closing lines that say where everything is.

Files are written whole to a temporary name and renamed, so a run killed midway never leaves a
half-written report that looks finished; results.json is written last, since its presence marks
a submission as graded (see `pool.batch.earlier_result`).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..model.files import RESULTS_FILE, write_atomically
from ..model.results import GradedSubmission, Visibility
from .classreport import class_report_html
from .feedback import feedback_html
from .items import ITEMS_FILE, OPTIONS_FILE, write_items
from .similarity import Similarity, find_similar_or_why
from .table import class_table, grades_csv

FEEDBACK_FILE = "feedback.html"
GRADES_FILE = "grades.csv"
CLASS_REPORT_FILE = "class_report.html"


def write_submission(graded: GradedSubmission, out: Path, visibility: Visibility | None = None) -> None:
    """feedback.html, then results.json, in out/<id>/ (its checks shown on Gradescope as `visibility` says);
    a file that already says the same is left as it is (a result kept from an earlier run keeps its date)."""
    folder = out / graded.id
    for path, text in ((folder / FEEDBACK_FILE, feedback_html(graded)),
                       (folder / RESULTS_FILE, json.dumps(graded.to_gradescope(visibility), indent=1, ensure_ascii=False))):
        if not _says(path, text):
            write_atomically(path, text)


def _says(path: Path, text: str) -> bool:
    try:
        return path.read_text("utf-8") == text
    except (OSError, UnicodeDecodeError):
        return False


def write_class(graded: list[GradedSubmission], out: Path, kept: frozenset[str] = frozenset(),
                similar: Similarity | None = None, notes: list[str] | tuple[str, ...] = ()) -> None:
    """grades.csv, the item statistics (items.csv, quiz_options.csv) and class_report.html; `kept`: the ids of
    results taken from an earlier run; `similar`: the pairs unusually alike (`find_similar_or_why`), None for a report without them; `notes`: what the
    PATHs held (model/students.py: who handed in what, and each entry that is no one's row)."""
    write_atomically(out / GRADES_FILE, grades_csv(graded))
    write_items(graded, out)
    write_atomically(out / CLASS_REPORT_FILE, class_report_html(graded, kept, similar, notes))


def run_summary(graded: int, reused: int, seconds: float, startup: float | None) -> str:
    """The run's last line, the same on every pool: how many were graded, how many reused, and the wall
    time from the command's start, start-up included."""
    reuse = f", {reused} reused from an earlier run (unchanged: their code, the secret, the parts, the graders)" \
        if reused else ""
    start = f"start-up {startup:.1f} s, included" if startup is not None else "no start-up: nothing to grade"
    return f"{graded} submission(s) graded{reuse}, in {seconds:.1f} s ({start})."


def where_reports_are(out: Path, graded: list[GradedSubmission], gradebook: str = "") -> str:
    """The closing lines of a run: where each kind of report is."""
    example = min((g.id for g in graded), default="<submission>")
    lines = [
        "Reports:",
        f"  feedback for each student:  {out / example / FEEDBACK_FILE}  (one folder per submission)",
        f"  Gradescope results:         {out / example / RESULTS_FILE}",
        f"  class table:                {out / GRADES_FILE}",
        f"  class report:               {out / CLASS_REPORT_FILE}  (open in a browser)",
        f"  item statistics:            {out / ITEMS_FILE}, {out / OPTIONS_FILE}",
    ]
    if gradebook:
        lines.append("  " + gradebook)
    return "\n".join(lines)


__all__ = ["write_atomically", "write_submission", "write_class", "find_similar_or_why", "where_reports_are", "run_summary",
           "class_table", "RESULTS_FILE", "FEEDBACK_FILE", "GRADES_FILE", "CLASS_REPORT_FILE"]
