"""python -m autograder grade PATH... --out DIR [--jobs N] [--secret S] [--nbgrader ASSIGNMENT] ...
   python -m autograder export (--from-grades GRADES_CSV | --nbgrader ASSIGNMENT) --roster CSV [--canvas F] [--moodle F]
   python -m autograder gradescope --out ZIP --secret-file FILE [...]      python -m autograder --version
   python -m autograder serve --config service.toml [--once]

Parsing, then calls the public API (api.py: grading, exporting) or the Gradescope zip's builder;
nothing is decided here. Exit status 0 when every submission was graded, whatever the students
scored; 1 when some could not be graded (grader errors); 2 for a usage error; 3 when grading was
refused because a sandbox could reach the reference, the graders or the secret.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from . import api, assignment
from .api import (BUDGET_SECONDS, MOODLE_OUT_OF, SIMILARITY_THRESHOLD, VISIBILITIES, GradescopeSettings as Settings,
                  Limits, Visibility, keep_memory_private, score_text, usable_cpus)


def _parser() -> argparse.ArgumentParser:
    # Options are exact: no prefix of one is taken for it (`--secret S` must not become `--secret-file S`, whose
    # message would print S). argparse's subparsers do not inherit allow_abbrev: each is given it.
    parser = argparse.ArgumentParser(prog="python -m autograder", description="Grade attention-assignment submissions.",
                                     allow_abbrev=False)
    parser.add_argument("--version", action="version", version=version_line(),
                        help="the grader's version (what changed in each: docs/changelog.md), then exit")
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grade", help="grade submissions and write results.json, feedback.html and grades.csv",
                       allow_abbrev=False)
    g.add_argument("paths", nargs="*", type=Path, help="notebooks, .py modules, or folders of one student's files")
    g.add_argument("--nbgrader", metavar="ASSIGNMENT",
                   help="grade every collected submission of this nbgrader assignment (run in the course root) "
                        "and write the scores into its gradebook")
    g.add_argument("--out", type=Path, required=True, help="folder for the reports")
    g.add_argument("--jobs", type=int, default=usable_cpus(),
                   help="submissions graded in parallel (default: the cores this process may use, within its "
                        "cgroup's CPU quota)")
    g.add_argument("--secret", default=os.environ.get("AUTOGRADER_SECRET"),
                   help="course secret that seeds every student's inputs (default: $AUTOGRADER_SECRET; without "
                        "either, a warning, and an error with --nbgrader)")
    g.add_argument("--parts", default=",".join(assignment.PART_NAMES),
                   help=f"comma-separated parts to grade (default: {','.join(assignment.PART_NAMES)})")
    g.add_argument("--timeout", type=float, default=Limits.call_seconds, metavar="SECONDS",
                   help=f"longest a single call into a submission may run (default: {Limits.call_seconds:g})")
    g.add_argument("--budget", type=float, default=BUDGET_SECONDS, metavar="SECONDS",
                   help="longest all calls into one submission may run together; checks left when it is spent "
                        f"fail as not run (default: {BUDGET_SECONDS:g})")
    g.add_argument("--visibility", default="visible", choices=VISIBILITIES,
                   help="when students see each check in results.json on Gradescope (default: visible)")
    g.add_argument("--visible", action="append", default=[], metavar="PATTERN",
                   help="checks shown at once whatever --visibility says: a pattern on '<part>/<check>' "
                        "(fnmatch, e.g. 'masks/*' or '*: shape*'); repeatable")
    g.add_argument("--quiz-counts", action=argparse.BooleanOptionalAction, default=None,
                   help="count the quiz's points in the total, or not (--no-quiz-counts); default: as the course's "
                        "nbgrader_config.py says (c.QuizRelease.counts, else a counted quiz counts and a self-check "
                        "one is reported but not counted)")
    g.add_argument("--force", action="store_true", help="regrade submissions that already have up-to-date reports")
    g.add_argument("--quiet", action="store_true", help="no progress bar and no table")
    g.add_argument("--similarity-threshold", type=_fraction, default=SIMILARITY_THRESHOLD, metavar="FRACTION",
                   help="the class report lists the pairs of submissions with a part whose code is at least this "
                        "alike (copydetect's share of one side's code matching the other's, the release's text left "
                        f"out): worth a look, no penalty (default: {SIMILARITY_THRESHOLD:g})")
    g.add_argument("--no-similarity", action="store_true",
                   help="no section of submissions unusually alike in the class report")
    g.add_argument("--dask", metavar="ADDRESS",
                   help="grade on a Dask cluster: tcp://host:port, tls://host:port, a scheduler file, or local:N "
                        "(a LocalCluster of N single-threaded worker processes)")
    g.add_argument("--tls-ca-file", help="with a tls:// --dask address: the CA certificate")
    g.add_argument("--tls-cert", help="with a tls:// --dask address: this client's certificate")
    g.add_argument("--tls-key", help="with a tls:// --dask address: this client's private key")
    g.add_argument("--allow-weak-sandbox", action="store_true",
                   help="grade even where sandboxes could read the reference and the graders (no namespaces): "
                        "only where no student can profit, e.g. grading your own test submissions")
    e = sub.add_parser("export", help="write the class's grades as the CSV files Canvas and Moodle import",
                       allow_abbrev=False)
    e.add_argument("--from-grades", type=Path, metavar="GRADES_CSV",
                   help="read the scores from a grading run's grades.csv (or its folder); no late penalties")
    e.add_argument("--nbgrader", metavar="ASSIGNMENT",
                   help="read the scores from the gradebook of the nbgrader course in this folder, late penalties "
                        "applied as `nbgrader export` applies them")
    e.add_argument("--roster", type=Path, required=True,
                   help="CSV: id (ours), then name, canvas_id, sis_user_id, sis_login_id, section (Canvas) and/or "
                        "email, username, idnumber (Moodle)")
    e.add_argument("--canvas", type=Path, metavar="FILE", help="write Canvas's gradebook import CSV here")
    e.add_argument("--moodle", type=Path, metavar="FILE", help="write Moodle's grade import CSV here")
    e.add_argument("--name", help="the LMS's assignment or grade item name (default: the assignment's); for Canvas, "
                                  "'Name (123)' updates Canvas assignment 123")
    e.add_argument("--per-part", action="store_true", help="Moodle: also one column (grade item) per part")
    e.add_argument("--moodle-id", choices=("email", "username", "idnumber"),
                   help="the roster column Moodle identifies users by (default: the first of these the roster has)")
    out_of = e.add_mutually_exclusive_group()
    out_of.add_argument("--moodle-out-of", type=float, metavar="N", default=MOODLE_OUT_OF,
                        help=f"Moodle: the total rescaled to be out of N (default: {MOODLE_OUT_OF:g}, the most a default "
                             "Moodle site accepts: it refuses a whole import with a grade above it)")
    out_of.add_argument("--moodle-points", dest="moodle_out_of", action="store_const", const=None,
                        help="Moodle: the total in points, not rescaled (for a site that allows grades above 100, "
                             "or an assignment out of at most 100)")
    e.add_argument("--skip-unmapped", action="store_true",
                   help="leave out, with a warning, ids the roster lacks (default: an error that lists them)")
    z = sub.add_parser("gradescope", help="build the Gradescope autograder zip (or, inside Gradescope, grade an upload)",
                       allow_abbrev=False, usage="%(prog)s --out ZIP --secret-file FILE [options]\n"
                                                 "       %(prog)s --run ROOT")
    z.add_argument("--out", type=Path, metavar="ZIP", help="the zip to write, e.g. autograder.zip (required to build one)")
    z.add_argument("--secret-file", type=Path, metavar="FILE",
                   help="a file holding the course secret, which goes into the zip (required to build one)")

    def secret_not_here(_value: str) -> str:  # the message never holds the value: it is a secret
        raise argparse.ArgumentTypeError("the zip takes the course secret from a file: --secret-file FILE (a "
                                         "secret on a command line is seen by every user of the machine)")

    z.add_argument("--secret", type=secret_not_here, help=argparse.SUPPRESS)
    z.add_argument("--visibility", default=Settings.visibility, choices=VISIBILITIES,
                   help=f"when students see each check (default: {Settings.visibility})")
    z.add_argument("--visible", action="append", default=[], metavar="PATTERN",
                   help="checks students see at once: a pattern on '<part>/<check>' (fnmatch); repeatable")
    z.add_argument("--max-submissions", type=int, default=0, metavar="N",
                   help="past N graded uploads, an upload is not graded and the last score stands (default: no limit)")
    z.add_argument("--timeout", type=float, default=Limits.call_seconds, metavar="SECONDS",
                   help=f"longest a single call into a submission may run (default: {Limits.call_seconds:g})")
    z.add_argument("--wheels", type=Path, metavar="DIR",
                   help="a folder of the locked packages' wheels to put in the zip, so that setup.sh installs offline")
    z.add_argument("--run", type=Path, metavar="ROOT",
                   help="inside Gradescope, as the zip's run_autograder calls it: grade ROOT/submission and write "
                        "ROOT/results/results.json (not for use outside Gradescope's image)")
    s = sub.add_parser("serve", help="the grading service: grade each submission as it reaches the nbgrader exchange, "
                                     "write its feedback, and (under a JupyterHub) serve its page (docs/service.md)",
                       allow_abbrev=False)
    s.add_argument("--config", type=Path, required=True, metavar="SERVICE_TOML", help="the service's configuration")
    s.add_argument("--once", action="store_true",
                   help="grade everything pending, write all feedback, then exit (for tests and cron)")
    sub.add_parser("bench", add_help=False, allow_abbrev=False,
                   help="time nbgrader autograde against this grader on a simulated class (in a checkout; "
                        "`bench --help` for its options)")
    return parser


def version_line() -> str:
    """The installed package's name and version (a checkout run without an install says so)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"attention-exercises {version('attention-exercises')} (what changed: docs/changelog.md)"
    except PackageNotFoundError:
        return "attention-exercises, not installed (a checkout run in place: see its pyproject.toml)"


def bench_command(argv: list[str]) -> int:
    """`bench` builds its class from the assignment's source notebooks: it needs a checkout."""
    if assignment.CHECKOUT_ROOT is None:
        return _usage("bench needs a checkout of the project (it builds a class from assignments/)")
    sys.path.insert(0, str(assignment.CHECKOUT_ROOT))
    from tools.bench import main as bench_main

    return bench_main(argv)


def export_command(args: argparse.Namespace) -> int:
    """`export`: the class's grades as the CSV files Canvas and Moodle import (api.export_grades)."""
    if not (args.canvas or args.moodle):
        return _usage("export: give --canvas FILE, --moodle FILE or both")
    if (args.from_grades is None) == (args.nbgrader is None):
        return _usage("export: give one of --from-grades DIR/grades.csv and --nbgrader ASSIGNMENT")
    if args.per_part and not args.moodle:
        return _usage("export: --per-part is for --moodle (Canvas takes one column per assignment)")
    try:
        exported = api.export_grades(
            args.roster, grades=args.from_grades, nbgrader=args.nbgrader, canvas=args.canvas, moodle=args.moodle,
            name=args.name, per_part=args.per_part, moodle_id=args.moodle_id, moodle_out_of=args.moodle_out_of,
            skip_unmapped=args.skip_unmapped)
    except api.ExportError as exc:
        return _usage(str(exc))
    for warning in exported.every_warning:
        print(f"warning: {warning}", file=sys.stderr)
    for path, export in exported.files.items():
        print(f"{export.lms}: wrote {path} ({export.rows} student(s), out of {score_text(export.out_of)})")
    return 0


def gradescope_command(args: argparse.Namespace) -> int:
    """`gradescope`: build the autograder zip (gradescope.py), or run inside it (`--run`)."""
    if args.run is not None:
        return api.run_in_gradescope(args.run)
    if args.out is None or args.secret_file is None:
        return _usage("gradescope: give --out ZIP and --secret-file FILE")
    settings = Settings(args.visibility, tuple(args.visible), max(0, args.max_submissions), args.timeout)
    try:
        listing = api.build_gradescope_zip(args.out, args.secret_file, settings, args.wheels)
    except api.GradescopeError as exc:
        return _usage(str(exc))
    print(f"wrote {args.out}:\n" + "\n".join(listing))
    print("Upload it as the assignment's autograder (Gradescope: Configure Autograder, zip file upload).")
    return 0


def serve_command(args: argparse.Namespace) -> int:
    """`serve`: the grading service (service/runner.py), which reads its configuration itself."""
    from .service import runner

    return runner.main(args.config, once=args.once)


def grade_command(args: argparse.Namespace, started: float) -> int:
    """`grade`: the options as a RunOptions, the run (api.grade_class), then its closing lines."""
    try:
        parts = assignment.parse_parts(args.parts)
    except ValueError as exc:
        return _usage(str(exc))
    dask_security = api.dask_security(args.tls_ca_file, args.tls_cert, args.tls_key) if args.dask else None
    options = api.RunOptions(
        out=args.out, paths=tuple(args.paths), nbgrader=args.nbgrader, secret=args.secret, parts=parts,
        jobs=args.jobs, call_seconds=args.timeout, budget_seconds=args.budget,
        visibility=Visibility(args.visibility, tuple(args.visible)), quiz_counts=args.quiz_counts, force=args.force,
        progress=not args.quiet, tell=tell_stderr, on_progress=ProgressBar(),
        similarity=None if args.no_similarity else args.similarity_threshold,
        dask=args.dask, dask_security=dask_security, allow_weak=args.allow_weak_sandbox)
    try:
        outcome = api.grade_class(options)
    except api.RunInterrupted as exc:
        print(f"\n{exc}", file=sys.stderr)
        return exc.status
    except api.RunError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.status
    if not args.quiet:
        print(api.closing_lines(outcome, args.out.resolve(), started), flush=True)
    return outcome.status


def tell_stderr(line: str) -> None:
    """Where a run's lines go on the command line (RunOptions.tell)."""
    print(line, file=sys.stderr, flush=True)


class ProgressBar:
    """RunOptions.on_progress on the command line: a bar of the submissions graded, on a terminal only (in a
    redirected log it would be a line per update)."""

    def __init__(self) -> None:
        self._bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="submission")
        self._bar.update(done - self._bar.n)
        if done >= total:
            self._bar.close()


def _usage(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def _fraction(text: str) -> float:
    """A number in (0, 1], for --similarity-threshold."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0 and at most 1 (e.g. 0.75)")
    return value


def main(argv: list[str] | None = None) -> int:
    started = time.monotonic()
    sys.dont_write_bytecode = True  # grading writes nothing but its reports
    keep_memory_private()  # the secret and the roster are in this process's memory
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["bench"]:  # its own options, parsed by tools/bench.py
        return bench_command(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "export":
        return export_command(args)
    if args.command == "gradescope":
        return gradescope_command(args)
    if args.command == "serve":
        return serve_command(args)
    return grade_command(args, started)
