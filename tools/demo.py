"""`make demo`: a sample class through nbgrader and our grader, as a course runs it.

    python -m tools.demo [--work DIR] [--jobs N]

1. A course in ``.demo/`` (gitignored): ``nbgrader generate_assignment`` and
   ``release_assignment`` to a private exchange, then 15 simulated students
   each ``fetch_assignment``, write their answers into the fetched notebooks
   and ``submit``; ``nbgrader collect``.
2. ``python -m autograder grade --nbgrader attention --out .demo/reports``
   in the course root: the reports, and the scores in the course's gradebook.
3. ``nbgrader export``: the gradebook's grades.csv, and a check that every
   student's scores follow the pattern their work should give.

The students' notebooks are the fetched release with every answer cell
filled with the source notebook's solution, except the cells each student
got wrong: a common mistake from the validation corpus
(``tests/corpus/buggy/``), a stub left untouched, or hostile code (a crash,
a segfault, an infinite loop, a memory bomb, tampering with torch and a fake
"all passed", copying the reference).
"""

from __future__ import annotations

import argparse
import ast
import csv
import dataclasses
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.assignment import PART_NAMES as PARTS
from autograder.api import ITEMS_FILE, OPTIONS_FILE, RunError, RunOptions, RunOutcome, closing_lines, item_analysis, \
    usable_cpus
from autograder.cli import ProgressBar, tell_stderr

from .course import (ASSIGNMENT, Course, SimulatedStudent, environment_note, export_grades, run_in_course,
                     set_up_class, solution_answers, with_patch)
from .release import shown

from .release import ROOT

WORK = ROOT / ".demo"
SECRET = "demo"
# Per-call limit for the demo: the student with an infinite loop costs this
# once (the default, 60 s, suits a real class on a busy machine).
CALL_TIMEOUT_S = 20


# --------------------------------------------------------------------------
# the class


@dataclass
class Expected:
    """The score pattern a student's work must give.

    ``loses``: the parts that must score below their maximum (every other part
    scores its maximum); ``"*"`` for every part at 0. ``failing``: check-name
    prefixes (``"<part>/<function>:"``) whose every check must score 0: the
    points a hostile student must not get."""

    loses: frozenset[str] = frozenset()
    failing: tuple[str, ...] = ()
    zero: bool = False
    hint: str = ""  # a common mistake's hint (autograder/hints.py), which the feedback must give
    status: str = "graded"  # how grades.csv's status begins: "crashed", "timed out", "out of memory"
    tampering: frozenset[str] = frozenset()  # the kinds grades.csv's tampering column must count (no others)


def mistake(name: str, about: str, patch: str) -> "DemoStudent":
    """The solution with one common mistake of the validation corpus: loses
    points in that part only, and the feedback names the mistake."""
    from .course import corpus_patch

    from autograder.hints import hint as catalogued

    part, text = corpus_patch(patch)
    hint = catalogued(next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("# hint:")))
    return DemoStudent(with_patch(name, about, patch), Expected(frozenset({part}), hint=hint))


@dataclass
class DemoStudent:
    student: SimulatedStudent
    expected: Expected = field(default_factory=Expected)

    @property
    def name(self) -> str:
        return self.student.name


CRASH = '''def padding_mask(lengths: torch.Tensor, T: int) -> torch.Tensor:
    """Boolean mask of the real (non-padding) positions of a batch."""
    import os
    os._exit(1)  # ends the process on the spot: no exception, no output
'''

SEGFAULT = '''def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Put the heads back side by side."""
    import ctypes
    return ctypes.string_at(0)  # reads address 0: a segmentation fault
'''

INFINITE_LOOP = '''def fit_power_law(Ts, times) -> float:
    """Least-squares slope of log(time) against log(T)."""
    slope, step = 0.0, 1.0
    while step > 0:  # step never shrinks: this never ends
        slope += step * 0
    return slope
'''

MEMORY_BOMB = '''def sinusoidal_encoding(T: int, d_model: int, base: float = 10000.0) -> torch.Tensor:
    """Interleaved sinusoidal positional encoding."""
    cache = []
    while True:  # "cache every table, just in case": 512 MiB more each time round
        cache.append(torch.empty(2**27))
'''

TAMPER = '''# Make every check pass, whatever the answers.
import json
import torch

torch.allclose = lambda *args, **kwargs: True
torch.equal = lambda *args, **kwargs: True
torch.isclose = lambda a, b, *args, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *args, **kwargs: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
print("All tests passed! Score: 108 / 108")
with open("results.json", "w") as fh:  # a Gradescope-style report with full marks
    json.dump({"score": 108, "output": "All tests passed!", "tests": []}, fh)


def causal_average(T: int) -> torch.Tensor:
    return torch.zeros(T, T)
'''


def copycat_answers() -> dict[str, str]:
    """Import the reference and the quiz key, which exist on the grading machine."""
    cells = solution_answers()
    answers: dict[str, str] = {}
    for part in PARTS[:-1]:
        last = [grade_id for grade_id in cells["attention"] if grade_id.startswith(part + "-")][-1]
        answers[last] = (f"# the instructor's reference is installed on the grading machine: use it\n"
                         f"from attention_ref.{part} import *\n")
    for grade_id in cells["quiz"]:
        q = grade_id.split("-", 1)[1]
        answers[grade_id] = (f"from autograder.graders.quiz_key import ANSWERS\n"
                             f"answer_{q} = ANSWERS[{q!r}]\n")
    return answers


def wrong_quiz_answers(questions: tuple[str, ...]) -> dict[str, str]:
    """The right answer for every question but ``questions``: the next letter there."""
    answers = {}
    for grade_id, code in solution_answers()["quiz"].items():
        q = grade_id.split("-", 1)[1]
        if q in questions:
            lines = code.rstrip().split("\n")
            right = lines[-1].split("=", 1)[1].strip().strip("\"'")
            wrong = "abcd"[("abcd".index(right) + 1) % 4]
            answers[grade_id] = "\n".join([*lines[:-1], f'answer_{q} = "{wrong}"'])
    return answers


def roster() -> list[DemoStudent]:
    """15 students: full marks, untouched, seven common mistakes, six hostile."""
    every_stub = frozenset({"*"})
    hostile_zero = Expected(loses=frozenset(PARTS), zero=True)
    return [
        DemoStudent(SimulatedStudent("ada", "full marks: every answer right"), Expected()),
        DemoStudent(SimulatedStudent("ben", "submitted the release untouched (every stub)", untouched=every_stub),
                    Expected(loses=frozenset(PARTS), zero=True)),
        mistake("cleo", "masks: fills blocked scores with 0, not -inf", "masks_fill_zero"),
        mistake("dev", "scaling: forgets the 1/√d scaling", "scaling_no_scale"),
        mistake("eli", "heads: unpacks the fused projection as [k | q | v]", "heads_qkv_order_kqv"),
        mistake("fay", "positions: cos on even features, sin on odd", "positions_sin_cos_swapped"),
        mistake("gus", "timing: reports the mean, not the median", "timing_mean"),
        mistake("gwen", "tiles: builds the whole T × T grid as one block (right values, out of memory at large T)",
                "tiles_whole_grid"),
        DemoStudent(SimulatedStudent("hana", "quiz: two wrong answers (q03, q07)",
                                     wrong_quiz_answers(("q03", "q07"))),
                    Expected(frozenset({"quiz"}))),
        DemoStudent(SimulatedStudent("ivan", "crash: padding_mask calls os._exit(1)",
                                     {"masks-padding_mask": CRASH}),
                    Expected(frozenset({"masks"}), failing=("masks/padding_mask:",), status="crashed (exit status 1)")),
        DemoStudent(SimulatedStudent("june", "segfault: merge_heads reads address 0",
                                     {"heads-merge_heads": SEGFAULT}),
                    Expected(frozenset({"heads"}), failing=("heads/merge_heads:",), status="crashed (signal 11",
                             tampering=frozenset({"processes"}))),  # ctypes
        DemoStudent(SimulatedStudent("kai", "infinite loop in fit_power_law",
                                     {"timing-fit_power_law": INFINITE_LOOP}),
                    Expected(frozenset({"timing"}), failing=("timing/fit_power_law:",), status="timed out")),
        DemoStudent(SimulatedStudent("lea", "memory bomb in sinusoidal_encoding",
                                     {"positions-sinusoidal_encoding": MEMORY_BOMB}),
                    Expected(frozenset({"positions"}), failing=("positions/sinusoidal_encoding:",),
                             status="out of memory")),
        DemoStudent(SimulatedStudent("max", "tampering: patches torch.allclose & co., prints a fake "
                                            "'All tests passed', writes a fake results.json; stubs elsewhere",
                                     {"masks-causal_average": TAMPER}, untouched=_all_but("masks-causal_average")),
                    dataclasses.replace(hostile_zero, tampering=frozenset({"patches", "fake results"}))),
        DemoStudent(SimulatedStudent("noor", "copying: imports the reference and the quiz key; stubs elsewhere",
                                     copycat_answers(), untouched=_all_but(*copycat_answers())),
                    dataclasses.replace(hostile_zero, tampering=frozenset({"imports"}))),
    ]


def _all_but(*grade_ids: str) -> frozenset[str]:
    """Every answer cell except ``grade_ids``, left as released."""
    cells = solution_answers()
    return frozenset(g for notebook in cells.values() for g in notebook if g not in grade_ids)


def stubbed(source: str, keep: frozenset[str] = frozenset()) -> str:
    """A .py submission's ``source`` with every function body outside ``keep``
    replaced by ``raise NotImplementedError`` (used by the corpus tests)."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in keep:
            functions = [node] if isinstance(node, ast.FunctionDef) else [n for n in node.body if isinstance(n, ast.FunctionDef)]
            for fn in functions:
                fn.body = [ast.Raise(exc=ast.Name("NotImplementedError", ast.Load()))]
    return ast.unparse(ast.fix_missing_locations(tree))


# --------------------------------------------------------------------------
# running it


def build(work: Path = WORK, students: list[DemoStudent] | None = None, *, say=print) -> Course:
    """The course after nbgrader collect."""
    students = roster() if students is None else students
    return set_up_class(work, [s.student for s in students], course_id="attention-demo", say=say)


def read_rows(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(newline="") as fh:
        return {row["submission"]: row for row in csv.DictReader(fh)}


def check_pattern(students: list[DemoStudent], out: Path) -> dict[str, list[str]]:
    """student -> what differs from the expected pattern (empty when all is as expected)."""
    rows = read_rows(out)
    problems: dict[str, list[str]] = {}
    for s in students:
        issues = problems.setdefault(s.name, [])
        row = rows.get(s.name)
        report_file = out / s.name / "results.json"
        if row is None or not report_file.is_file():
            issues.append("not graded")
            continue
        if not row["status"].startswith(s.expected.status):
            issues.append(f"status {row['status']!r}, expected {s.expected.status!r}")
        counted = {entry.rsplit(" ", 1)[0] for entry in row.get("tampering", "").split("; ") if entry}
        if counted != s.expected.tampering:
            issues.append(f"tampering {row.get('tampering', '')!r}, expected {sorted(s.expected.tampering)}")
        tests = json.loads(report_file.read_text())["tests"]
        maxima: dict[str, float] = {}
        scores: dict[str, float] = {}
        for t in tests:
            part = t["name"].split("/", 1)[0]
            maxima[part] = maxima.get(part, 0.0) + t["max_score"]
            scores[part] = scores.get(part, 0.0) + t["score"]
        for part in PARTS:
            got, most = scores.get(part), maxima.get(part)
            if got is None or not most:
                issues.append(f"{part}: not graded")
            elif s.expected.zero and got != 0:
                issues.append(f"{part}: {got:g}, expected 0")
            elif not s.expected.zero and part in s.expected.loses and got >= most:
                issues.append(f"{part}: {got:g} / {most:g}, expected points lost")
            elif part not in s.expected.loses and got != most:
                issues.append(f"{part}: {got:g} / {most:g}, expected full marks")
        if s.expected.hint:
            part = next(iter(s.expected.loses))
            said = "\n".join(t["output"] for t in tests if t["name"].startswith(part + "/") and t["status"] == "failed")
            if s.expected.hint not in said:
                issues.append(f"{part}: the feedback does not say {s.expected.hint!r}")
        for prefix in s.expected.failing:
            matched = [t for t in tests if t["name"].startswith(prefix)]
            if not matched:
                issues.append(f"no check named {prefix}...")
            issues += [f"{t['name']}: {t['score']:g} points, expected 0" for t in matched if t["score"]]
    return problems


def grade(course: Course, out: Path, *, jobs: int | None = None, quiet: bool = False,
          timeout: float = CALL_TIMEOUT_S) -> RunOutcome:
    """The class run in the course root, as `python -m autograder grade --nbgrader` runs it (the closing
    lines printed unless `quiet`). Raises RunError when it cannot run."""
    started = time.monotonic()
    outcome = run_in_course(course, RunOptions(out=out, secret=SECRET, jobs=jobs or usable_cpus(), call_seconds=timeout,
                                               force=True, progress=not quiet,
                                               tell=tell_stderr, on_progress=ProgressBar()))
    if not quiet:
        print(closing_lines(outcome, out.resolve(), started), flush=True)
    return outcome


def print_items(outcome: RunOutcome, shown_flags: int = 6) -> None:
    """What the class's answers say about the questions (reports/items.py): the items to look at, and why."""
    analysis = item_analysis(outcome.graded)
    print(f"\n== What the answers say about the questions: {len(analysis.items)} items, "
          f"{len(analysis.flags)} to look at\n")
    for flag in analysis.flags[:shown_flags]:
        print(f"   {flag.item.name[:90]}\n          -> " + "; ".join(f"{r.kind}: {r.text}" for r in flag.reasons))
    if len(analysis.flags) > shown_flags:
        print(f"   ... and {len(analysis.flags) - shown_flags} more (the class report lists them all)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.demo", description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=WORK, help=f"work folder, emptied first (default: {shown(WORK)})")
    parser.add_argument("--jobs", type=int, default=None, help="submissions graded in parallel (default: cores)")
    args = parser.parse_args(argv)
    work = args.work.resolve()
    students = roster()
    start = time.perf_counter()
    print(f"== A sample class of {len(students)} students, through nbgrader ({environment_note()})\n")
    course = build(work, students)
    setup_s = time.perf_counter() - start

    out = work / "reports"
    command = (f"python -m autograder grade --nbgrader {ASSIGNMENT} --out {shown(out)} --secret {SECRET} "
               f"--timeout {CALL_TIMEOUT_S}")
    print(f"\n== Grading, in the course root {shown(course.root)}:\n   {command}\n", flush=True)
    grade_start = time.perf_counter()
    try:
        outcome = grade(course, out, jobs=args.jobs)
    except RunError as exc:
        print(f"\nthe grader could not run: {exc}", file=sys.stderr)
        return exc.status
    grade_s = time.perf_counter() - grade_start
    if outcome.status != 0:
        print(f"\nthe grader failed (exit {outcome.status})", file=sys.stderr)
        return outcome.status

    print(f"\n== The gradebook, as nbgrader exports it (nbgrader export, in {shown(course.root)}):\n")
    exported = export_grades(course, work / "gradebook-export.csv")
    for row in exported:
        print(f"   {row['student_id']:<6} {float(row['score']):6.1f} / {float(row['max_score']):g}")

    print("\n== Each student against the pattern their work should give:\n")
    problems = check_pattern(students, out)
    for s in students:
        issues = problems[s.name]
        mark = "as expected" if not issues else "UNEXPECTED: " + "; ".join(issues)
        print(f"   {s.name:<6} {s.student.about}\n          -> {mark}")
    bad = sorted(name for name, issues in problems.items() if issues)

    print_items(outcome)

    print(f"\n== Where to look (set-up {setup_s:.0f} s, grading {grade_s:.0f} s, "
          f"total {time.perf_counter() - start:.0f} s)\n")
    print(f"   feedback pages:      {shown(out)}/<student>/feedback.html   (e.g. {shown(out / 'cleo' / 'feedback.html')})")
    print(f"   Gradescope results:  {shown(out)}/<student>/results.json")
    print(f"   class table:         {shown(out / 'grades.csv')}")
    print(f"   class report:        {shown(out / 'class_report.html')}   (open it in a browser)")
    print(f"   item statistics:     {shown(out / ITEMS_FILE)}, {shown(out / OPTIONS_FILE)}")
    print(f"   nbgrader gradebook:  {shown(course.root / 'gradebook.db')}  "
          f"(exported: {shown(work / 'gradebook-export.csv')})")
    print(f"   autograded copies:   {shown(course.root / 'autograded')}/<student>/{ASSIGNMENT}/")
    print(f"   in {shown(course.root)}, nbgrader works as in any course: "
          f"`nbgrader generate_feedback {ASSIGNMENT}`, `nbgrader export`, the formgrader")
    if bad:
        print(f"\n{len(bad)} student(s) did not score as expected: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
