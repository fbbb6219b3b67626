"""A class run from start to end, with one owner.

`run_class` opens each thing once and closes it once, in this order: the plan (who is graded: the
paths given, split into students, and an nbgrader course's collected submissions), the pool of
grading workers, the grading (each submission's reports written as it comes back), nbgrader's
gradebook, the class's reports. The command line parses its options into `RunOptions` and prints
the outcome; it, the bench and the demo run it through the public API (api.py: `grade_class`,
`grade_submission`), and `gradescope --run`, a layer below the API, calls `run_class` itself.

The pool is begun before the course is read (the workers' parent imports torch meanwhile) and
started once the course's root is known: its zygote hides that root from every sandbox.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import assignment, quiz, releases, reports
from .pool.batch import LocalPool, fingerprint, plan, write_record
from .pool.protocol import Pool
from .model.results import Counting, GradedSubmission, Status, Visibility
from .model.students import LayoutError, held_by
from .model.submission import SubmissionError, safe_id, unique_ids
from .nbgrader.counting import quiz_counting as quiz_counting_of
from .pool.worker import WorkerError, WorkerFault, WorkerSettings
from .isolation.limits import BUDGET_SECONDS, Limits
from .reports.similarity import DEFAULT_THRESHOLD as SIMILARITY_THRESHOLD
from .reports.similarity import Similarity
from .text import printable


class RunError(Exception):
    """The run could not start or go on; `status` is the exit status that says why: 2 for a usage
    error, 1 when no worker could grade, 3 when grading was refused (a sandbox could reach the
    reference, the graders or the secret)."""

    def __init__(self, message: str, status: int = 2):
        super().__init__(message)
        self.status = status


class RunInterrupted(RunError):
    """Ctrl-C: what was graded is kept, and the same run again grades the rest."""

    def __init__(self, message: str):
        super().__init__(message, 130)


@dataclass(frozen=True)
class RunOptions:
    """What a class run is asked to do; every field has the command line's default."""

    out: Path  # folder for the reports (created if missing)
    paths: tuple[Path, ...] = ()  # notebooks, .py modules, folders of one student's files or of a class
    nbgrader: str | None = None  # grade every collected submission of this nbgrader assignment, fill its gradebook
    course_root: Path | None = None  # the nbgrader course's root, and where nbgrader_config.py is read (default: cwd)
    # grade against the release in this folder (what the students fetched: an exchange's outbound/<assignment>/);
    # None: the grader's own copy, or with `nbgrader` the course's build
    release: Path | None = None
    secret: str | None = None  # seeds every student's inputs; None: an error with `nbgrader`, else a warning
    parts: tuple[str, ...] = assignment.PART_NAMES  # in assignment order
    jobs: int = 1  # submissions graded at once on this machine (CPU slots)
    call_seconds: float = Limits.call_seconds  # longest a single call into a submission may run
    budget_seconds: float = BUDGET_SECONDS  # longest all calls into one submission may run together
    visibility: Visibility = Visibility()  # when students see each check on Gradescope
    quiz_counts: bool | None = None  # the quiz in the total or not; None: as the course's configuration says
    force: bool = False  # regrade submissions whose reports are up to date
    progress: bool = True  # say the isolation line, the quiz's line and the notes too, and report progress
    # Where the run's lines go as they happen (the command line: stderr); None: only into RunOutcome.lines.
    # Warnings always go; the isolation line, the quiz's line and notes only with `progress`.
    tell: Callable[[str], None] | None = None
    # With `progress`: called with (graded so far, to grade) before the first and after each submission graded
    # (the command line draws a bar with it).
    on_progress: Callable[[int, int], None] | None = None
    similarity: float | None = SIMILARITY_THRESHOLD  # the class report's threshold for pairs alike; None: no section
    dask: str | None = None  # grade on this Dask cluster (tcp://, tls://, a scheduler file, local:N)
    dask_security: Any = None  # distributed.Security for a tls:// cluster (pool.cluster.security)
    allow_weak: bool = False  # grade even where sandboxes could read the reference and the graders


@dataclass
class RunOutcome:
    """What a run did, for whoever prints it."""

    graded: list[GradedSubmission]  # every submission's result, those kept from an earlier run included
    kept: list[GradedSubmission]  # results taken from an earlier run
    gradebook_line: str = ""  # the closing line about nbgrader's gradebook ("" without --nbgrader)
    failed: bool = False  # some submission could not be graded, or the gradebook could not be written
    weaknesses: set[str] = field(default_factory=set)  # how this machine's sandboxes are weaker than they should be
    ready_at: float | None = None  # when the first submission went to a worker (time.monotonic)
    counting: Counting = Counting()  # what the run's totals counted: whatever reports on it counts the same
    lines: list[str] = field(default_factory=list)  # every line the run said (RunOptions.tell), in order

    @property
    def status(self) -> int:
        return 1 if self.failed else 0


@dataclass
class _Voice:
    """What the run says: each line kept for its outcome and told as it happens (`RunOptions.tell`)."""

    tell: Callable[[str], None] | None
    progress: bool
    lines: list[str] = field(default_factory=list)

    def __call__(self, line: str) -> None:
        self.lines.append(line)
        if self.tell is not None:
            self.tell(line)

    def note(self, line: str) -> None:
        """A line said only with `progress`: the isolation, the quiz, a note."""
        if self.progress:
            self(line)


def run_class(options: RunOptions) -> RunOutcome:
    """Grade a class as `options` say (see the module's docstring); raises RunError when it cannot. It prints
    nothing: what it says goes to `options.tell` and into the outcome's `lines`."""
    say = _Voice(options.tell, options.progress)
    try:
        outcome = _run(options, say)
        outcome.lines = say.lines
        return outcome
    except SubmissionError as exc:  # a file no student's work can be read from: the command was wrong
        raise RunError(str(exc)) from None


def _run(options: RunOptions, say: _Voice) -> RunOutcome:
    course_root = Path(options.course_root or Path.cwd()).resolve()
    secret = _secret(options, say)
    quiz_counting = quiz_counting_of(options.quiz_counts, course_root)
    counting = Counting.of_quiz(quiz_counting.counts)
    _check_paths(options.paths, options.nbgrader)
    students, notes = _students(options.paths)
    given = _with_ids(students, say)
    out = options.out.resolve()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # before any process starts: a folder the reports cannot go to is a usage error
        raise RunError(f"--out {options.out}: not a folder the reports can be written to ({exc.strerror})") from None
    pool = _pool(options)
    pool.begin()  # the workers' parent imports torch while the course and the submissions are read
    try:
        course, release, paths, folders = _course(options, course_root, given, quiz_counting, say)
        pool.start(_settings(options, secret, out, paths, course.root if course else None, release))
        gradebook = _gradebook_writer(course, out, options.parts, folders)
        try:
            graded, kept, similar = _grade(options, secret, out, paths, pool, quiz_counting.line(), counting, notes,
                                           gradebook.add if gradebook else lambda graded: None, say, release)
        except BaseException:
            if gradebook is not None:
                gradebook.finish()
            raise
    except WorkerError as exc:
        raise RunError(str(exc), 3 if exc.kind is WorkerFault.REFUSED else 1) from None
    except KeyboardInterrupt:
        done = len(list(out.glob(f"*/{reports.RESULTS_FILE}")))
        raise RunInterrupted(f"interrupted: the reports of {done} submission(s) are kept in {out}; run the same "
                             "command again to grade the rest (what is graded is reused)") from None
    finally:
        pool.close()
    outcome = RunOutcome(graded, kept, weaknesses=set(pool.weaknesses), ready_at=pool.ready_at,
                         failed=any(g.status is Status.GRADER_ERROR for g in graded), counting=counting)
    if course is not None and gradebook is None:
        outcome.gradebook_line = "Gradebook: not written (only a full grading, every part, goes into the gradebook)."
    if gradebook is not None:
        written, outcome.gradebook_line, told = gradebook.finish()
        for line in told:
            say(line)
        outcome.failed |= not written
        _note_rejected(graded, gradebook.update.rejected, gradebook.folders)
    reports.write_class(graded, out, kept=frozenset(g.id for g in kept), similar=similar, notes=notes)
    if pool.weaknesses:
        say(f"autograder: weaker sandbox on this machine: {'; '.join(sorted(pool.weaknesses))}.")
    return outcome


def _secret(options: RunOptions, say: _Voice) -> str:
    if options.secret is not None:
        return options.secret
    if options.nbgrader:
        raise RunError("no course secret: give --secret S or set $AUTOGRADER_SECRET (every student's inputs come "
                       "from it; --secret '' grades with an empty one, on purpose)")
    say("warning: no --secret and no $AUTOGRADER_SECRET: every student's inputs come from an empty secret, "
        "which anyone can reproduce; set one for a course")
    return ""


def _course(options: RunOptions, course_root: Path, given: list[tuple[Path, str]], quiz_counting: quiz.QuizCounting,
            say: _Voice) -> tuple[Any, releases.Release | None, list[tuple[Path, str]], dict[str, str]]:
    """(the nbgrader course or None, the release graded against (None: the grader's own), every (path, id) to
    grade, each course student's reports folder). A course is graded against its own build (nbgrader/build.py)."""
    if not options.nbgrader:
        return None, _given_release(options.release), given, {}
    if options.release is not None:
        raise RunError("give a release folder or an nbgrader course, not both: a course is graded against its own build")
    from .nbgrader.build import graded_build
    from .nbgrader.course import CourseError, open_course

    try:
        course = open_course(options.nbgrader, course_root)
        release, build_notes = graded_build(course, quiz_counting)
    except CourseError as exc:
        raise RunError(str(exc)) from None
    for note in build_notes:
        say.note(f"note: {note}")
    submitted = course.submissions()
    named = _with_ids(given + [(path, student) for student, path in submitted.items()], say)
    folders = {student: sid for (_, sid), student in zip(named[len(given):], submitted)}
    if not submitted:
        say.note(f"no collected submissions of {options.nbgrader!r} in {course.submissions_pattern()} (run "
                 f"`nbgrader collect {options.nbgrader}` or `nbgrader zip_collect {options.nbgrader}` first)")
    _check_paths(tuple(path for path, _ in named), options.nbgrader)
    return course, release, named, folders


def _given_release(folder: Path | None) -> releases.Release | None:
    """The release in `folder` (None: the grader's own copy); RunError names what it lacks."""
    if folder is None:
        return None
    try:
        return releases.read(Path(folder), f"the release in {folder}")
    except (FileNotFoundError, NotADirectoryError, PermissionError) as exc:
        raise RunError(f"{folder}: not a release to grade against ({exc})") from None


def _grade(options: RunOptions, secret: str, out: Path, paths: list[tuple[Path, str]], pool: Pool, quiz_line: str,
           counting: Counting, notes: list[str], on_result: Callable[[GradedSubmission], None], say: _Voice,
           release: releases.Release | None) -> tuple[list[GradedSubmission], list[GradedSubmission], Similarity | None]:
    """Grade what needs grading against `release`, each submission's reports written as it comes back (then
    `on_result`, kept results first); (every result, those kept from an earlier run, the pairs alike)."""
    found = plan(paths, out, options.parts, options.force, secret, release)
    prints = {s.id: fingerprint(s, options.parts, secret, release) for s in found.todo}
    graded = list(found.kept)
    for kept in found.kept:
        kept.counting = counting
        reports.write_submission(kept, out, options.visibility)  # as this run counts and shows them
        on_result(kept)
    if found.todo:
        pool.warm(len(found.todo))
        say.note(f"isolation: {pool.ready()}")
    for line in [quiz_line, *(f"note: {note}" for note in notes)]:
        say.note(line)
    similar = _compared_meanwhile(found.cells, options.similarity, release)
    progress = options.on_progress if options.progress and found.todo else None
    if progress is not None:
        progress(0, len(found.todo))
    for done, result in enumerate(pool.grade(found.todo, options.parts), 1):
        result.counting = counting
        reports.write_submission(result, out, options.visibility)
        if result.status is not Status.GRADER_ERROR:
            write_record(out, result, prints[result.id])
        graded.append(result)
        on_result(result)
        if progress is not None:
            progress(done, len(found.todo))
    return graded, found.kept, similar()


def _compared_meanwhile(cells: dict[str, dict], threshold: float | None,
                        release: releases.Release | None) -> Callable[[], Similarity | None]:
    """The pairs unusually alike (None without a threshold), found on a thread while the class is graded:
    after the grading, copydetect's import and comparisons (about a second) would lengthen every run."""
    if threshold is None:
        return lambda: None
    comparing = ThreadPoolExecutor(1, thread_name_prefix="similarity")
    found = comparing.submit(reports.find_similar_or_why, cells, threshold, release)
    comparing.shutdown(wait=False)  # the comparison goes on; `found.result` waits for it
    return found.result


def _settings(options: RunOptions, secret: str, out: Path, paths: list[tuple[Path, str]],
              course_root: Path | None, release: releases.Release | None) -> WorkerSettings:
    """What every worker is told: the secret, the limits, and what no sandbox may see besides what the
    policy hides anyway (the reports, the submissions' folders, the course)."""
    given = [(Path(p), "") for p in options.paths]  # a class folder too, not only the students split from it
    secrets = {str(out), *(str(p.resolve() if p.is_dir() else p.resolve().parent) for p, _ in paths + given)}
    if course_root is not None:
        secrets.add(str(course_root))
    return WorkerSettings(secret=secret, limits=Limits(call_seconds=options.call_seconds,
                                                       budget_seconds=options.budget_seconds),
                          secrets=tuple(sorted(secrets)), allow_weak=options.allow_weak,
                          release=dict(release.files) if release is not None else {})


def _pool(options: RunOptions) -> Pool:
    """Where the submissions are graded: worker processes here, or a Dask cluster."""
    if options.dask:
        from .pool.cluster import DaskPool

        return DaskPool(options.dask, options.dask_security)
    return LocalPool(max(1, options.jobs))


def _gradebook_writer(course: Any, out: Path, parts: tuple[str, ...], folders: dict[str, str]) -> Any:
    """With an nbgrader course and every part graded: a writer of the gradebook that works while grading goes
    on; `folders`: each student's reports folder in `out` (their id, made safe)."""
    if course is None or set(parts) != set(assignment.PART_NAMES):
        return None
    from .nbgrader.gradebook import GradebookWriter

    return GradebookWriter(course, out, folders)


def _note_rejected(graded: list[GradedSubmission], rejected: dict[str, str], folders: dict[str, str]) -> None:
    """Submissions nbgrader's converter would not read: graded by us, but the gradebook holds no score;
    their status in the class's reports says so."""
    why = {folders.get(student, student): reason for student, reason in rejected.items()}
    for g in graded:
        if g.id in why:
            g.problems.append(f"not in the gradebook: nbgrader could not read the notebook ({why[g.id]}); "
                              "left for manual grading")


def _check_paths(paths: tuple[Path, ...], nbgrader: str | None) -> None:
    if not paths and not nbgrader:
        raise RunError("nothing to grade: give paths or --nbgrader ASSIGNMENT")
    for path in paths:
        if not os.path.lexists(path):
            raise RunError(f"{path}: no such file or folder")


def _students(paths: tuple[Path, ...]) -> tuple[list[tuple[Path, str]], list[str]]:
    """Each path as the students it holds (model/students.py), one (path, id) each, and the notes the run
    prints and the class report shows. Every path that cannot be split without a guess is named in one RunError."""
    found: list[tuple[Path, str]] = []
    notes: list[str] = []
    refused: list[str] = []
    for path in paths:
        try:
            held = held_by(path)
        except LayoutError as exc:
            refused.append(str(exc))
            continue
        notes += held.notes
        found += held.students
    if refused:
        raise RunError("\n".join(refused))
    return found, notes


def _with_ids(paths: list[tuple[Path, str]], say: _Voice) -> list[tuple[Path, str]]:
    """Each path with a safe id of its own (two that would share one get `~2`, `~3`...)."""
    ids = unique_ids([safe_id(name) for _, name in paths])
    for (path, name), sid in zip(paths, ids):
        if sid != safe_id(name):
            say(f"note: {printable(str(path))} is graded as {printable(sid)} ({printable(safe_id(name))} is taken)")
    return [(path, sid) for (path, _), sid in zip(paths, ids)]


def closing_lines(outcome: RunOutcome, out: Path, started: float) -> str:
    """The class table and the lines that end a run on the terminal: where the reports are, how long it took."""
    graded, kept = outcome.graded, outcome.kept
    startup = outcome.ready_at - started if outcome.ready_at is not None else None
    table = reports.class_table(graded)  # each result counts as the run decided (GradedSubmission.counting)
    return "\n".join([table, "", reports.where_reports_are(out, graded, outcome.gradebook_line),
                      reports.run_summary(len(graded) - len(kept), len(kept), time.monotonic() - started, startup)])
