"""python -m autograder grade PATH... --out DIR [--jobs N] [--secret S] [--nbgrader ASSIGNMENT]

Exit status 0 when every submission was graded, whatever the students scored;
non-zero only when the grader itself could not do its job.

With ``--nbgrader ASSIGNMENT``, run in an nbgrader course root, every
collected submission (``submitted/<student>/<assignment>/``) is graded, and
the scores also go into the course's gradebook (see ``autograder.gradebook``).
"""

from __future__ import annotations

import argparse
import atexit
import json
import multiprocessing
import os
import sys
import time
from pathlib import Path
from typing import Any

from tqdm import tqdm

from . import reports
from .engine import ALL_PARTS, configure_grading_process, grade, sandbox_backend
from .sandbox import Limits, Zygote
from .submission import ASSIGNMENT_DIR, PUBLIC_HELPERS, SubmissionError, read_submission


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Grade attention-assignment submissions.")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade submissions and write results.json, feedback.html and grades.csv")
    g.add_argument("paths", nargs="*", type=Path, help="notebooks, .py modules, or folders of one student's files")
    g.add_argument("--nbgrader", metavar="ASSIGNMENT",
                   help="grade every collected submission of this nbgrader assignment (run in the course root) "
                        "and write the scores into its gradebook")
    g.add_argument("--out", type=Path, required=True, help="folder for the reports")
    g.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="submissions graded in parallel (default: cores)")
    g.add_argument("--secret", default=os.environ.get("AUTOGRADER_SECRET", ""),
                   help="course secret that seeds every student's inputs (default: $AUTOGRADER_SECRET)")
    g.add_argument("--parts", default=",".join(ALL_PARTS), help=f"comma-separated parts to grade (default: {','.join(ALL_PARTS)})")
    g.add_argument("--timeout", type=float, default=Limits.call_seconds, metavar="SECONDS",
                   help=f"longest a single call into a submission may run (default: {Limits.call_seconds:g})")
    g.add_argument("--force", action="store_true", help="regrade submissions that already have up-to-date reports")
    g.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    return parser


_zygote: Zygote | None = None


def _start_worker(hidden: list[Path], call_seconds: float) -> None:
    """Each grading process gets its own zygote, which forks the sandboxes."""
    global _zygote
    configure_grading_process()
    public = [ASSIGNMENT_DIR / name for name in PUBLIC_HELPERS if (ASSIGNMENT_DIR / name).exists()]
    _zygote = Zygote(Limits(call_seconds=call_seconds), hidden, public)
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


def _existing_row(submission_id: str, out: Path, path: Path, parts: tuple[str, ...]) -> dict[str, Any] | None:
    """The row of an earlier run, if it graded the same parts and is newer
    than every file of the submission (a resubmission is graded again)."""
    row_file = out / submission_id / "row.json"
    try:
        row = json.loads(row_file.read_text())
        done = row_file.stat().st_mtime
    except (OSError, ValueError):
        return None
    if not isinstance(row, dict) or str(row.get("status", "")).startswith("grader error"):
        return None
    if any(row.get(part, "") == "" for part in parts):
        return None
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    if any(f.stat().st_mtime > done for f in files):
        return None
    return row


def grade_command(args: argparse.Namespace) -> int:
    parts = tuple(p for p in args.parts.split(",") if p)
    unknown = set(parts) - set(ALL_PARTS)
    if unknown:
        print(f"unknown parts {sorted(unknown)}; the parts are {', '.join(ALL_PARTS)}", file=sys.stderr)
        return 2
    course = None
    jobs: list[tuple[Path, str]] = [(path, _submission_id(path)) for path in args.paths]
    if args.nbgrader:
        from .gradebook import CourseError, open_course

        try:
            course = open_course(args.nbgrader)
        except CourseError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        collected = course.submissions()
        if not collected and not args.quiet:
            print(f"no collected submissions of {args.nbgrader!r} in "
                  f"{course.coursedir.format_path(course.coursedir.submitted_directory, '*', args.nbgrader)} "
                  f"(run `nbgrader collect {args.nbgrader}` or `nbgrader zip_collect {args.nbgrader}` first)",
                  file=sys.stderr)
        jobs += [(path, student) for student, path in collected.items()]
    if not jobs and not args.nbgrader:
        print("nothing to grade: give paths or --nbgrader ASSIGNMENT", file=sys.stderr)
        return 2
    for path, _ in jobs:
        if not path.exists():
            print(f"{path}: no such file or folder", file=sys.stderr)
            return 2
    ids = [submission_id for _, submission_id in jobs]
    clashes = sorted({i for i in ids if ids.count(i) > 1})
    if clashes:
        print(f"two submissions would share the id(s) {', '.join(clashes)}: rename one", file=sys.stderr)
        return 2

    out = args.out.resolve()
    rows, todo = [], []
    for path, submission_id in jobs:
        row = None if args.force else _existing_row(submission_id, out, path, parts)
        if row:
            rows.append(row)
        else:
            todo.append((path, submission_id, out, args.secret, parts))
    out.mkdir(parents=True, exist_ok=True)  # so the sandboxes hide it from the first run on
    hidden = _secret_folders(out, [path for path, _ in jobs])
    if course is not None:
        hidden += [f for f in course.secret_folders() if f not in hidden]
    workers = max(1, min(args.jobs, len(todo) or 1))
    if todo:
        ctx = multiprocessing.get_context("fork")
        with ctx.Pool(workers, initializer=_start_worker, initargs=(hidden, args.timeout)) as pool:
            progress = tqdm(total=len(todo), unit="submission", disable=args.quiet, file=sys.stderr)
            for row in pool.imap_unordered(_grade_one, todo):
                rows.append(row)
                progress.update()
            progress.close()
    reports.write_atomically(out / "grades.csv", reports.grades_csv(rows))
    failed = any(r["status"].startswith("grader error") for r in rows)

    if not args.quiet:
        print(_table(rows), flush=True)
    gradebook_line = ""
    if course is not None:
        gradebook_ok, gradebook_line = _write_gradebook(course, out, rows, parts, quiet=args.quiet)
        failed |= not gradebook_ok
    if not args.quiet:
        print()
        print(reports.where_reports_are(out, rows, gradebook_line), flush=True)
    return 1 if failed else 0


def _write_gradebook(course, out: Path, rows: list[dict[str, Any]], parts: tuple[str, ...], *,
                     quiet: bool) -> tuple[bool, str]:
    """Scores into the nbgrader gradebook; (success, a line for the summary)."""
    from .gradebook import record

    if set(parts) != set(ALL_PARTS):
        return True, "Gradebook: not written (only a full grading, every part, goes into the gradebook)."
    start = time.perf_counter()
    if not quiet:
        print(f"\nWriting {len(rows)} submission(s) into the nbgrader gradebook ...", file=sys.stderr, flush=True)
    collected = set(course.submissions())
    rows = [r for r in rows if r["submission"] in collected]  # not the PATHs given besides --nbgrader
    bad = {r["submission"] for r in rows if r["status"].startswith("grader error")}
    try:
        update = record(course, out, [r["submission"] for r in rows], ungraded=bad)
    except Exception as exc:  # noqa: BLE001 - the reports stand; say why the gradebook does not
        print(f"gradebook: could not write {course.db_url}: {type(exc).__name__}: {exc}", file=sys.stderr)
        return False, f"Gradebook: NOT written ({type(exc).__name__}: {exc})"
    for error in update.errors:
        print(f"gradebook: {error}", file=sys.stderr)
    if update.errors and update.log:
        log_file = out / "nbgrader-gradebook.log"
        reports.write_atomically(log_file, update.log)
        print(f"gradebook: nbgrader's log is in {log_file}", file=sys.stderr)
    line = (f"Gradebook: {course.db_url} ({len(update.written)} submission(s) scored"
            + (f", {len(update.manual)} left for manual grading: {', '.join(update.manual)}" if update.manual else "")
            + f"; autograded notebooks in {Path(course.coursedir.root) / course.coursedir.autograded_directory}"
            + f"; {time.perf_counter() - start:.1f} s)")
    return not update.errors, line


def _secret_folders(out: Path, paths: list[Path]) -> list[Path]:
    """What a submission must not read: the reference, the graders, the answer keys, other students' work."""
    root = ASSIGNMENT_DIR.parent.parent
    folders = [root / "attention_ref", root / "autograder" / "graders", root / "assignments", root / "solutions",
               root / "tests", out.resolve()]
    folders += sorted({(p if p.is_dir() else p.parent).resolve() for p in paths})
    return [f for f in folders if f.is_dir()]


def _submission_id(path: Path) -> str:
    """The folder or file name."""
    return path.name if path.is_dir() else path.stem


def _table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no submissions)"
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
