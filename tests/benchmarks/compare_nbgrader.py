"""Benchmark: ``nbgrader autograde`` against ``python -m autograder grade --nbgrader``.

    .venv/bin/python tests/benchmarks/compare_nbgrader.py [--students 40] [--jobs N] [--work DIR] [--serial]

Builds one nbgrader course (generate_assignment, release_assignment, fetch and
submit for every student, collect) with a mix of correct work, untouched
stubs and common mistakes (tests/corpus/buggy/, one per student, and wrong
quiz answers), copies it, and then, one after the other on this machine:

* ``nbgrader autograde attention`` on one copy (every notebook executed top
  to bottom in a fresh kernel, one submission after another; the grade cells
  call ``autograder.notebook.grade_part``);
* ``python -m autograder grade --nbgrader attention --out reports`` on the
  other (only answer and setup cells run, sandboxed, submissions in
  parallel), gradebook writing included;
* with ``--serial``, ours again with ``--jobs 1``.

Prints both wall times, the ratio, the machine's load, and whether every
grade cell got the same score in both gradebooks. Not collected by pytest.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder import course as C
from autograder.demo import wrong_quiz_answers

MISTAKES = (
    "masks_fill_zero", "masks_transposed_tril_T", "masks_padding_on_queries",
    "scaling_no_scale", "scaling_softmax_dim_minus2", "scaling_entropy_p_log_p",
    "heads_qkv_order_kqv", "heads_no_output_projection", "heads_split_reshape_no_transpose",
    "positions_sin_cos_swapped", "positions_start_at_one",
    "timing_mean", "timing_no_warmup", "timing_bytes_ignore_heads",
)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--students", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="our grader's --jobs")
    parser.add_argument("--work", type=Path, default=None, help="work folder (default: a temporary one, removed)")
    parser.add_argument("--serial", action="store_true", help="also time our grader with --jobs 1")
    args = parser.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="compare-nbgrader-"))
    say = lambda m: print(m, flush=True)  # noqa: E731
    say(f"machine: {C.environment_note()}; work folder {work}")

    students = class_of(args.students)
    start = time.perf_counter()
    ours = C.set_up_class(work / "ours", students, course_id="bench")
    say(f"course with {len(students)} submissions built in {time.perf_counter() - start:.0f} s "
        f"({sum(s.about == 'correct' for s in students)} correct, "
        f"{sum(s.about.startswith('untouched') for s in students)} untouched, the rest with mistakes)")
    theirs = C.Course.open(work / "theirs", "bench")
    shutil.copytree(ours.work, theirs.work, symlinks=True)
    serial = None
    if args.serial:
        serial = C.Course.open(work / "serial", "bench")
        shutil.copytree(ours.work, serial.work, symlinks=True)

    timings: dict[str, dict] = {}

    say(f"\n[1] nbgrader autograde {C.ASSIGNMENT} --force   (load before: {load()})")
    start = time.perf_counter()
    theirs.autograde()
    timings["nbgrader autograde"] = {"wall_s": time.perf_counter() - start, "load_after": load()}
    say(f"    {timings['nbgrader autograde']['wall_s']:.1f} s (load after: {load()})")

    runs = [("autograder --jobs %d" % args.jobs, ours, args.jobs)]
    if serial is not None:
        runs.append(("autograder --jobs 1", serial, 1))
    for label, course, jobs in runs:
        say(f"\n[{len(timings) + 1}] python -m autograder grade --nbgrader {C.ASSIGNMENT} --out reports "
            f"--jobs {jobs}   (load before: {load()})")
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--nbgrader", C.ASSIGNMENT,
                               "--out", str(course.work / "reports"), "--jobs", str(jobs), "--force"],
                              cwd=course.root, env=course.env(), capture_output=True, text=True)
        timings[label] = {"wall_s": time.perf_counter() - start, "load_after": load(), "exit": proc.returncode}
        # the grader's summary says how long writing the gradebook took: "...; 12.3 s)"
        found = re.search(r"Gradebook: .*; ([0-9.]+) s\)", proc.stdout)
        timings[label]["gradebook_s"] = float(found.group(1)) if found else None
        say(f"    {timings[label]['wall_s']:.1f} s, of which writing the gradebook "
            f"{timings[label]['gradebook_s']} s; exit {proc.returncode} (load after: {load()})")
        if proc.returncode != 0:
            say(proc.stdout[-2000:] + proc.stderr[-3000:])

    reference = C.gradebook_part_scores(theirs.root / "gradebook.db")
    say("\nresults")
    nb_s = timings["nbgrader autograde"]["wall_s"]
    agree_all = True
    for label, course, _ in runs:
        scores = C.gradebook_part_scores(course.root / "gradebook.db")
        differ = {s: (scores.get(s), reference.get(s)) for s in set(scores) | set(reference)
                  if scores.get(s) != reference.get(s)}
        agree_all &= not differ
        s = timings[label]["wall_s"]
        timings[label]["agrees"] = not differ
        say(f"  {label:<22} {s:7.1f} s   nbgrader/ours = {nb_s / s:5.2f}x   "
            f"per-part scores agree with nbgrader autograde: {'yes' if not differ else 'NO'}")
        for student, (got, want) in sorted(differ.items()):
            say(f"      {student}: ours {got}\n      {' ' * len(student)}  nbgrader {want}")
    say(f"  {'nbgrader autograde':<22} {nb_s:7.1f} s   ({nb_s / len(students):.2f} s per submission)")
    say(f"  {len(students)} submissions x {len(next(iter(reference.values())))} grade cells; "
        f"machine: {C.environment_note()}")
    (work / "timings.json").write_text(json.dumps(timings, indent=1))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if agree_all else 1


if __name__ == "__main__":
    sys.exit(main())
