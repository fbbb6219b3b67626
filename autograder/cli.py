"""python -m autograder grade PATH... --out DIR [--jobs N] [--secret S] [--nbgrader ASSIGNMENT]

Exit status 0 when every submission was graded, whatever the students scored;
non-zero only when the grader itself could not do its job.
"""

from __future__ import annotations

import argparse
import atexit
import json
import multiprocessing
import os
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from . import reports
from .engine import ALL_PARTS, grade, sandbox_backend
from .sandbox import Limits, Zygote
from .submission import ASSIGNMENT_DIR, PUBLIC_HELPERS, SubmissionError, read_submission


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Grade attention-assignment submissions.")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade submissions and write results.json, feedback.html and grades.csv")
    g.add_argument("paths", nargs="*", type=Path, help="notebooks, .py modules, or folders of one student's files")
    g.add_argument("--nbgrader", metavar="ASSIGNMENT", help="grade every collected submission of this nbgrader assignment")
    g.add_argument("--out", type=Path, required=True, help="folder for the reports")
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded in parallel (default: cores)")
    g.add_argument("--secret", default=os.environ.get("AUTOGRADER_SECRET", ""),
                   help="course secret that seeds every student's inputs (default: $AUTOGRADER_SECRET)")
    g.add_argument("--parts", default=",".join(ALL_PARTS), help=f"comma-separated parts to grade (default: {','.join(ALL_PARTS)})")
    g.add_argument("--force", action="store_true", help="regrade submissions that already have reports")
    g.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    return parser


_zygote: Zygote | None = None


def _start_worker(hidden: list[Path]) -> None:
    """Each grading process gets its own zygote, which forks the sandboxes."""
    global _zygote
    public = [ASSIGNMENT_DIR / name for name in PUBLIC_HELPERS if (ASSIGNMENT_DIR / name).exists()]
    _zygote = Zygote(Limits(), hidden, public)
    atexit.register(_zygote.close)


def _grade_one(job: tuple[Path, str, Path, str, tuple[str, ...]]) -> dict[str, Any]:
    path, submission_id, out, secret, parts = job
    try:
        submission = read_submission(path)
        submission.id = submission_id
        assert _zygote is not None
        return reports.write_submission_reports(grade(submission, secret, parts, sandbox_backend(_zygote)), out)
    except Exception as exc:  # noqa: BLE001 - one submission's grader failure must not stop the class
        return {"submission": submission_id, "status": f"grader error: {type(exc).__name__}: {exc}"[:300]}


def _existing_row(submission_id: str, out: Path) -> dict[str, Any] | None:
    row_file = out / submission_id / "row.json"
    try:
        return json.loads(row_file.read_text())
    except (OSError, ValueError):
        return None


def _collected(assignment: str) -> list[Path]:
    """submitted/<student>/<assignment>/ folders of the nbgrader course in the current folder."""
    return sorted(p for p in Path("submitted").glob(f"*/{assignment}") if p.is_dir())


def grade_command(args: argparse.Namespace) -> int:
    paths = list(args.paths) + (_collected(args.nbgrader) if args.nbgrader else [])
    if not paths:
        print("nothing to grade: give paths or --nbgrader ASSIGNMENT", file=sys.stderr)
        return 2
    for path in paths:
        if not path.exists():
            print(f"{path}: no such file or folder", file=sys.stderr)
            return 2
    parts = tuple(p for p in args.parts.split(",") if p)
    unknown = set(parts) - set(ALL_PARTS)
    if unknown:
        print(f"unknown parts {sorted(unknown)}; the parts are {', '.join(ALL_PARTS)}", file=sys.stderr)
        return 2
    rows, todo = [], []
    for path in paths:
        submission_id = _submission_id(path, args.nbgrader)
        row = None if args.force else _existing_row(submission_id, args.out)
        if row:
            rows.append(row)
        else:
            todo.append((path, submission_id, args.out, args.secret, parts))
    hidden = _secret_folders(args.out, paths)
    jobs = max(1, min(args.jobs, len(todo) or 1))
    with multiprocessing.get_context("fork").Pool(jobs, initializer=_start_worker, initargs=(hidden,)) as pool:
        progress = tqdm(total=len(todo), unit="submission", disable=args.quiet or not todo, file=sys.stderr)
        for row in pool.imap_unordered(_grade_one, todo):
            rows.append(row)
            progress.update()
        progress.close()
    reports.write_atomically(args.out / "grades.csv", reports.grades_csv(rows))
    if not args.quiet:
        print(_table(rows))
        print(f"\nReports: {args.out}/<submission>/feedback.html and results.json; class table: {args.out / 'grades.csv'}")
    return 1 if any(r["status"].startswith("grader error") for r in rows) else 0


def _secret_folders(out: Path, paths: list[Path]) -> list[Path]:
    """What a submission must not read: the reference, the graders, the answer keys, other students' work."""
    root = ASSIGNMENT_DIR.parent.parent
    folders = [root / "attention_ref", root / "autograder" / "graders", root / "assignments", root / "solutions",
               root / "tests", out.resolve()]
    folders += sorted({(p if p.is_dir() else p.parent).resolve() for p in paths})
    return [f for f in folders if f.is_dir()]


def _submission_id(path: Path, assignment: str | None) -> str:
    """The folder or file name; for collected nbgrader work, the student's name."""
    if assignment and path.is_dir() and path.name == assignment:
        return path.parent.name
    return path.name if path.is_dir() else path.stem


def _table(rows: list[dict[str, Any]]) -> str:
    columns = ["submission", *ALL_PARTS, "total", "status"]
    body = [[str(r.get(c, "")) for c in columns] for r in sorted(rows, key=lambda r: r["submission"])]
    widths = [max(len(c), *(len(b[i]) for b in body)) for i, c in enumerate(columns)]
    line = lambda cells: "  ".join(cell.ljust(w) for cell, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join([line(columns), line(["-" * w for w in widths]), *map(line, body)])


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return grade_command(args)
    except SubmissionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
