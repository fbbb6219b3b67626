"""python -m autograder grade PATH... --out DIR [--jobs N] [--secret S] [--nbgrader ASSIGNMENT] ...

Parsing, then calls into the layers below; nothing is decided here. Exit status 0 when every
submission was graded, whatever the students scored; 1 when some could not be graded (grader
errors); 2 for a usage error; 3 when grading was refused because a sandbox could reach the
reference, the graders or the secret.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import assignment, reports
from .core.batch import ClassRun, LocalPool, grade_class
from .core.results import Status
from .core.submission import SubmissionError, submission_id
from .core.worker import WorkerError, WorkerSettings
from .isolation.limits import Limits

DEFAULT_BUDGET_SECONDS = 600.0


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
    g.add_argument("--parts", default=",".join(assignment.PART_NAMES),
                   help=f"comma-separated parts to grade (default: {','.join(assignment.PART_NAMES)})")
    g.add_argument("--timeout", type=float, default=Limits.call_seconds, metavar="SECONDS",
                   help=f"longest a single call into a submission may run (default: {Limits.call_seconds:g})")
    g.add_argument("--budget", type=float, default=DEFAULT_BUDGET_SECONDS, metavar="SECONDS",
                   help="longest all calls into one submission may run together; checks left when it is spent "
                        f"fail as not run (default: {DEFAULT_BUDGET_SECONDS:g})")
    g.add_argument("--force", action="store_true", help="regrade submissions that already have up-to-date reports")
    g.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    g.add_argument("--dask", metavar="ADDRESS",
                   help="grade on a Dask cluster: tcp://host:port, tls://host:port, a scheduler file, or local:N "
                        "(a LocalCluster of N single-threaded worker processes)")
    g.add_argument("--tls-ca-file", help="with a tls:// --dask address: the CA certificate")
    g.add_argument("--tls-cert", help="with a tls:// --dask address: this client's certificate")
    g.add_argument("--tls-key", help="with a tls:// --dask address: this client's private key")
    g.add_argument("--allow-weak-sandbox", action="store_true",
                   help="grade even where sandboxes could read the reference and the graders (no namespaces): "
                        "only where no student can profit, e.g. grading your own test submissions")
    sub.add_parser("bench", add_help=False,
                   help="time nbgrader autograde against this grader on a simulated class (in a checkout; "
                        "`bench --help` for its options)")
    return parser


def bench_command(argv: list[str]) -> int:
    """`bench` builds its class from the assignment's source notebooks: it needs a checkout."""
    if assignment.CHECKOUT_ROOT is None:
        return _usage("bench needs a checkout of the project (it builds a class from assignments/)")
    sys.path.insert(0, str(assignment.CHECKOUT_ROOT))
    from tools.bench import main as bench_main

    return bench_main(argv)


def grade_command(args: argparse.Namespace) -> int:
    try:
        parts = assignment.parse_parts(args.parts)
    except ValueError as exc:
        return _usage(str(exc))
    paths = [(path, submission_id(path)) for path in args.paths]
    problem = _check_paths(paths, args.nbgrader)
    if problem:
        return _usage(problem)
    out = args.out.resolve()
    course_root = Path.cwd().resolve() if args.nbgrader else None  # an nbgrader course's root, normally
    pool = _pool(args, _settings(args, out, paths, course_root))
    try:
        pool.start()  # the zygote and the workers' parent import while the course and submissions are read
    except WorkerError as exc:
        return _refused(exc)
    course = None
    if args.nbgrader:
        from .nbgrader.course import CourseError, open_course

        try:
            course = open_course(args.nbgrader)
        except CourseError as exc:
            pool.close()
            return _usage(str(exc))
        paths += [(path, student) for student, path in course.submissions().items()]
        if not course.submissions() and not args.quiet:
            print(f"no collected submissions of {args.nbgrader!r} in {course.submissions_pattern()} (run "
                  f"`nbgrader collect {args.nbgrader}` or `nbgrader zip_collect {args.nbgrader}` first)", file=sys.stderr)
        problem = _check_paths(paths, args.nbgrader)
        if problem:
            pool.close()
            return _usage(problem)
        if course.root != course_root:  # its configuration puts the course elsewhere: hide that instead
            pool.close()
            pool = _pool(args, _settings(args, out, paths, course.root))
    settings = pool.settings
    gradebook = _gradebook_writer(course, out, parts)
    start = time.perf_counter()
    try:
        graded = grade_class(ClassRun(paths, out, parts, settings, force=args.force), pool, progress=not args.quiet,
                             on_result=gradebook.add if gradebook else lambda graded: None)
    except WorkerError as exc:
        return _refused(exc)
    if pool.weaknesses:
        print(f"autograder: weaker sandbox on this machine: {'; '.join(sorted(pool.weaknesses))}.", file=sys.stderr)
    failed = any(g.status is Status.GRADER_ERROR for g in graded)
    if not args.quiet:
        print(reports.class_table(graded), flush=True)
    gradebook_line = ""
    if course is not None and gradebook is None:
        gradebook_line = "Gradebook: not written (only a full grading, every part, goes into the gradebook)."
    if gradebook is not None:
        written, gradebook_line = gradebook.finish()
        failed |= not written
    if not args.quiet:
        print("\n" + reports.where_reports_are(out, graded, gradebook_line), flush=True)
        startup = f" (start-up {pool.startup_seconds:.1f} s)" if pool.startup_seconds is not None else ""
        print(f"Graded {len(graded)} submission(s) in {time.perf_counter() - start:.1f} s{startup}.", flush=True)
    return 1 if failed else 0


def _settings(args: argparse.Namespace, out: Path, paths: list[tuple[Path, str]],
              course_root: Path | None) -> WorkerSettings:
    """What every worker is told: the secret, the limits, and what no sandbox may see besides what the
    policy hides anyway (the reports, the submissions' folders, the course)."""
    secrets = {str(out), *(str(p.resolve() if p.is_dir() else p.resolve().parent) for p, _ in paths)}
    if course_root is not None:
        secrets.add(str(course_root))
    return WorkerSettings(secret=args.secret, call_seconds=args.timeout, budget_seconds=args.budget,
                          secrets=tuple(sorted(secrets)), allow_weak=args.allow_weak_sandbox)


def _gradebook_writer(course, out: Path, parts: tuple[str, ...]):
    """With --nbgrader and every part graded: a writer of the gradebook that works while grading goes on."""
    if course is None or set(parts) != set(assignment.PART_NAMES):
        return None
    from .nbgrader.gradebook import GradebookWriter

    return GradebookWriter(course, out)


def _pool(args: argparse.Namespace, settings: WorkerSettings):
    """Where the submissions are graded: worker processes here, or a Dask cluster."""
    if args.dask:
        from .core.cluster import DaskPool, security

        return DaskPool(settings, args.dask, security(args.tls_ca_file, args.tls_cert, args.tls_key))
    return LocalPool(settings, max(1, args.jobs))


def _check_paths(paths: list[tuple[Path, str]], nbgrader: str | None) -> str:
    """What is wrong with the paths to grade, or ""."""
    if not paths and not nbgrader:
        return "nothing to grade: give paths or --nbgrader ASSIGNMENT"
    for path, _ in paths:
        if not os.path.lexists(path):
            return f"{path}: no such file or folder"
    ids = [sid for _, sid in paths]
    clashes = sorted({i for i in ids if ids.count(i) > 1})
    if clashes:
        return f"two submissions would share the id(s) {', '.join(clashes)}: rename one"
    return ""


def _refused(exc: WorkerError) -> int:
    """No worker could grade: 3 when a sandbox could reach what it must not, else 1."""
    print(f"error: {exc}", file=sys.stderr)
    return 3 if "refused" in str(exc) else 1


def _usage(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    sys.dont_write_bytecode = True  # grading writes nothing but its reports
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:  # its own options, parsed by tools/bench.py
        return bench_command(argv[1:])
    args = _parser().parse_args(argv)
    try:
        return grade_command(args)
    except SubmissionError as exc:
        return _usage(str(exc))
