"""Benchmark: `nbgrader autograde` against `python -m autograder grade --nbgrader` on the same class.

    python -m autograder bench [--students 40] [--jobs N] [--json FILE] [--work DIR] [--serial]

Builds one nbgrader course (generate_assignment, release_assignment, fetch and submit for every
student, collect) with a mix of correct work, untouched stubs and common mistakes (one corpus
patch per student, and wrong quiz answers), copies it, and then, one after the other:

* `nbgrader autograde attention` on one copy (every notebook executed top to bottom in a fresh
  kernel, one submission after another; the grade cells grade in the student's kernel);
* our class run, `grade --nbgrader attention` (autograder.api.grade_class, called in this process:
  the command line adds only Python's start-up), on the other (only answer and setup cells run,
  sandboxed, submissions in parallel), gradebook writing included;
* with `--serial`, ours again with `--jobs 1`.

Prints both wall times and their ratio, our start-up cost, the per-submission cost of each part,
the machine's load, and whether every grade cell got the same score in both gradebooks (exit
status 1 if not). Needs a checkout of the project (it builds the class from the source notebooks).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from autograder import assignment

from . import course as C
from .demo import wrong_quiz_answers

MISTAKES = (
    "masks_fill_zero", "masks_transposed_tril_T", "masks_padding_on_queries",
    "scaling_no_scale", "scaling_softmax_dim_minus2", "scaling_entropy_p_log_p",
    "heads_qkv_order_kqv", "heads_no_output_projection", "heads_split_reshape_no_transpose",
    "positions_sin_cos_swapped", "positions_start_at_one",
    "timing_mean", "timing_no_warmup", "timing_bytes_ignore_heads",
    "tiles_no_rescale", "tiles_last_block_dropped",
)
SECRET = "bench"


def class_of(n: int) -> list[C.SimulatedStudent]:
    """n students: about a third correct, a sixth untouched, the rest one mistake each."""
    students = []
    for i in range(n):
        name = f"s{i + 1:02d}"
        kind = i % 6
        if kind in (0, 3):
            students.append(C.SimulatedStudent(name, "correct"))
        elif kind == 5:
            students.append(C.SimulatedStudent(name, "untouched stubs", untouched=frozenset({"*"})))
        else:
            mistake = MISTAKES[(i // 2) % len(MISTAKES)]
            student = C.with_patch(name, mistake, mistake)
            if i % 4 == 1:
                student.answers.update(wrong_quiz_answers(("q05",)))
                student.about += " + one wrong quiz answer"
            students.append(student)
    return students


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def run_ours(course: C.Course, jobs: int) -> dict:
    """Our class run in the course root (autograder.api.grade_class, in this process), timed; with its start-up
    and how long the gradebook took."""
    from autograder.api import RunError, RunOptions
    from autograder.cli import tell_stderr

    start = time.perf_counter()
    started = time.monotonic()
    try:
        outcome = C.run_in_course(course, RunOptions(out=course.work / "reports", secret=SECRET, jobs=jobs, force=True,
                                                     progress=False, tell=tell_stderr))
    except RunError as exc:
        return {"wall_s": time.perf_counter() - start, "exit": exc.status, "load_after": load(), "output": str(exc),
                "startup_s": None, "gradebook_s": None}
    found = {"wall_s": time.perf_counter() - start, "exit": outcome.status, "load_after": load(),
             "startup_s": round(outcome.ready_at - started, 1) if outcome.ready_at is not None else None}
    match = re.search(r"([0-9.]+) s in all\)", outcome.gradebook_line)
    found["gradebook_s"] = float(match.group(1)) if match else None
    if outcome.status != 0:
        found["output"] = outcome.gradebook_line
    return found


def part_costs(reports: Path) -> dict[str, float]:
    """Mean seconds per submission of each part, from the reports."""
    from autograder.api import read_results

    costs: dict[str, list[float]] = {}
    for graded in read_results(reports).submissions.values():
        for part, seconds in graded.part_seconds.items():
            costs.setdefault(part, []).append(seconds)
    return {part: statistics.fmean(costs[part]) for part in assignment.PART_NAMES if part in costs}


def parser() -> argparse.ArgumentParser:
    """The bench's options (`python -m autograder bench --help`)."""
    parser = argparse.ArgumentParser(prog="python -m autograder bench", description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=40, metavar="N",
                        help="the simulated class's size: about a third correct, a sixth untouched, the rest one "
                             "mistake each (default: 40)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="our grader's --jobs")
    parser.add_argument("--json", type=Path, default=None, help="write the timings here too")
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: a temporary one, removed)")
    parser.add_argument("--serial", action="store_true", help="also time our grader with --jobs 1")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="bench-"))
    say = lambda m: print(m, flush=True)  # noqa: E731
    say(f"machine: {C.environment_note()}; work folder {work}")

    students = class_of(args.students)
    start = time.perf_counter()
    ours = C.set_up_class(work / "ours", students, course_id="bench")
    say(f"course with {len(students)} submissions built in {time.perf_counter() - start:.0f} s "
        f"({sum(s.about == 'correct' for s in students)} correct, "
        f"{sum(s.about.startswith('untouched') for s in students)} untouched, the rest with mistakes)")
    copies = {"nbgrader autograde": C.Course.open(work / "theirs", "bench")}
    runs = [(f"autograder --jobs {args.jobs}", ours, args.jobs)]
    if args.serial:
        copies["autograder --jobs 1"] = C.Course.open(work / "serial", "bench")
        runs.append(("autograder --jobs 1", copies["autograder --jobs 1"], 1))
    for copy in copies.values():
        shutil.copytree(ours.work, copy.work, symlinks=True)

    timings: dict[str, dict] = {"students": len(students), "machine": C.environment_note()}
    theirs = copies["nbgrader autograde"]
    say(f"\n[1] AUTOGRADER_SECRET={SECRET} nbgrader autograde {assignment.ASSIGNMENT} --force   (load before: {load()})")
    start = time.perf_counter()
    theirs.autograde(env={"AUTOGRADER_SECRET": SECRET})
    timings["nbgrader autograde"] = {"wall_s": time.perf_counter() - start, "load_after": load()}
    say(f"    {timings['nbgrader autograde']['wall_s']:.1f} s (load after: {load()})")
    for label, course, jobs in runs:
        say(f"\n[{len(timings) - 1}] autograder.api.grade_class (grade --nbgrader {assignment.ASSIGNMENT} --jobs {jobs})   "
            f"(load before: {load()})")
        timings[label] = run_ours(course, jobs)
        timings[label]["part_s"] = part_costs(course.work / "reports")
        say(f"    {timings[label]['wall_s']:.1f} s: start-up {timings[label]['startup_s']} s, gradebook written while "
            f"grading ({timings[label]['gradebook_s']} s from start to end); exit {timings[label]['exit']} "
            f"(load after: {load()})")
        if timings[label]["exit"] != 0:
            say(timings[label]["output"])

    reference = C.gradebook_part_scores(theirs.root / "gradebook.db")
    nb_s = timings["nbgrader autograde"]["wall_s"]
    agree_all = True
    say("\nresults")
    for label, course, _ in runs:
        scores = C.gradebook_part_scores(course.root / "gradebook.db")
        differ = {s: (scores.get(s), reference.get(s)) for s in set(scores) | set(reference)
                  if scores.get(s) != reference.get(s)}
        agree_all &= not differ
        timings[label]["agrees"] = not differ
        timings[label]["ratio"] = nb_s / timings[label]["wall_s"]
        say(f"  {label:<22} {timings[label]['wall_s']:7.1f} s   nbgrader/ours = {timings[label]['ratio']:5.2f}x   "
            f"every grade cell's score the same as nbgrader autograde's: {'yes' if not differ else 'NO'}")
        for student, (got, want) in sorted(differ.items()):
            say(f"      {student}: ours {got}\n      {' ' * len(student)}  nbgrader {want}")
        say("    per submission, each part: " + ", ".join(f"{p} {s * 1000:.0f} ms"
                                                          for p, s in timings[label]["part_s"].items()))
    say(f"  {'nbgrader autograde':<22} {nb_s:7.1f} s   ({nb_s / len(students):.2f} s per submission)")
    say(f"  {len(students)} submissions x {len(next(iter(reference.values()), {}))} grade cells; "
        f"machine: {C.environment_note()}")
    (work / "timings.json").write_text(json.dumps(timings, indent=1))
    if args.json:
        args.json.write_text(json.dumps(timings, indent=1))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if agree_all else 1


if __name__ == "__main__":
    sys.exit(main())
