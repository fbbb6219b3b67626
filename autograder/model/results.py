"""What grading finds, in one model: each check's result and each submission's, with their status.

A `GradedSubmission` serialises itself: as JSON between a grading worker and the process that
writes the reports, and as Gradescope's results.json (which is also what a later run reads back
to resume, and what the nbgrader gradebook is written from).
"""

from __future__ import annotations

import enum
import fnmatch
from collections.abc import Collection
from dataclasses import asdict, dataclass, field
from typing import Any

from ..quiz import OPTIONS
from ..quiz import PART as QUIZ_PART
from .submission import REFUSED
from .tampering import Tampering


# How the sandbox's troubles read in a status (isolation.protocol's error kinds, plain strings here).
TIMEOUT, BUDGET, MEMORY, CRASH, PROTOCOL = "timeout", "budget", "memory", "crash", "protocol"
PASSED = "Passed."  # a passing check's output on Gradescope, when it has no note
TROUBLE_LABELS = (("timed out", (TIMEOUT, BUDGET)), ("out of memory", (MEMORY,)), ("crashed", (CRASH, PROTOCOL)))


class Status(str, enum.Enum):
    """How grading a submission went (its column in grades.csv)."""

    GRADED = "graded"
    PROBLEMS = "graded with problems"  # graded, but something in the files was missing, unreadable or refused
    GRADER_ERROR = "grader error"  # a fault of ours: no score is given


@dataclass
class CheckResult:
    """One graded check."""

    part: str
    name: str
    max_score: float
    passed: bool = True
    outputs: list[str] = field(default_factory=list)
    internal_error: bool = False  # the grader itself broke: the check says nothing of the student's work
    figures: list[dict] = field(default_factory=list)  # what a picture shows better than words (reports.figures)
    hint: str = ""  # the likely mistake the grader named (its own words, never the submission's)
    trouble: str = ""  # why the submission's code did not answer, as the grader saw it (protocol error kinds)
    detail: str = ""  # how, for a crash: "exit status 1", "signal 11 (SIGSEGV)"
    # A multiple-choice check's option chosen ("" for none) and its right option, as the key letters them: for
    # the class's item analysis (reports.items), kept in the grader's own record, never in results.json.
    chosen: str = ""
    right: str = ""

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0

    def to_gradescope(self, visibility: str = "visible") -> dict[str, Any]:
        """A Gradescope test entry; its name starts with "<part>/"."""
        entry = {"name": f"{self.part}/{self.name}", "score": self.score, "max_score": self.max_score,
                 "status": "passed" if self.passed else "failed",
                 "output": "\n\n".join(self.outputs) if self.outputs else PASSED, "visibility": visibility}
        extra = {k: v for k, v in (("figures", self.figures), ("hint", self.hint), ("trouble", self.trouble),
                                   ("detail", self.detail)) if v}
        if extra:
            entry["extra_data"] = extra
        return entry

    @classmethod
    def from_gradescope(cls, test: dict[str, Any]) -> "CheckResult":
        part, _, name = str(test["name"]).partition("/")
        passed = test["status"] == "passed"
        extra = test.get("extra_data") or {}
        output = str(test.get("output", ""))
        return cls(part, name, float(test["max_score"]), passed, [] if passed and output == PASSED else [output],
                   figures=list(extra.get("figures", [])), hint=str(extra.get("hint", "")),
                   trouble=str(extra.get("trouble", "")), detail=str(extra.get("detail", "")))


VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")  # Gradescope's, per test
AFTER_DUE_DATE = "after_due_date"


@dataclass(frozen=True)
class Counting:
    """Which parts a total leaves out, and which it counts but students may see only after the due date.

    A self-check quiz tells students at once which answer is right, so its points would go to anyone who
    tries: it is reported and `uncounted`. A counted quiz is in the total but `held_back`: on Gradescope,
    with unlimited uploads, any score of it shown before the due date would let a student find each
    answer by uploading again (see `GradedSubmission.to_gradescope`)."""

    uncounted: frozenset[str] = frozenset()
    held_back: frozenset[str] = frozenset()

    def counts(self, part: str) -> bool:
        return part not in self.uncounted

    @classmethod
    def of_quiz(cls, counts: bool) -> "Counting":
        """A run's counting as its quiz decision says: the quiz left out, or counted and held back until the
        due date on Gradescope."""
        part = frozenset({QUIZ_PART})
        return cls(held_back=part) if counts else cls(uncounted=part)


@dataclass(frozen=True)
class Visibility:
    """When a student sees each check on Gradescope: `default`, but the checks matching a pattern of
    `visible` (fnmatch on "<part>/<check>": the public self-checks' equivalents, say) at once."""

    default: str = "visible"
    visible: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.default not in VISIBILITIES:
            raise ValueError(f"visibility {self.default!r}: one of {', '.join(VISIBILITIES)}")

    def of(self, check: CheckResult, counting: Counting) -> str:
        """When students see `check`: a part `counting` holds back until the due date is never visible
        before it, whatever the default or a `visible` pattern says."""
        name = f"{check.part}/{check.name}"
        shown = "visible" if any(fnmatch.fnmatchcase(name, p) for p in self.visible) else self.default
        return AFTER_DUE_DATE if shown == "visible" and check.part in counting.held_back else shown


@dataclass
class GradedSubmission:
    """Every check of one submission, with what was wrong with its files."""

    id: str
    checks: list[CheckResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    error: str = ""  # why the grader could not grade it (a fault of ours)
    seconds: float = 0.0
    part_seconds: dict[str, float] = field(default_factory=dict)  # wall time of each part's checks
    notes: list[str] = field(default_factory=list)  # what the status should say that is no problem (a file's name)
    # what it tried that an honest submission never does (for the instructor: never in results.json, never a score)
    tampering: Tampering = field(default_factory=Tampering)
    busy_seconds: float = 0.0  # how much later than their limits its calls were stopped, for a busy machine's CPU
    # What it cost, as counts a busy machine does not change: the time limits of the calls stopped for running past
    # them, together (proxy.Clock), and the CPU time its calls caused by the kernel's count (its sandbox's processes
    # and the grader serving them; a call the kernel did not count, by its wall time).
    stopped_seconds: float = 0.0
    cpu_seconds: float = 0.0
    # which parts its total counts: the run decides (classrun: the quiz's settings) before anything is written
    counting: Counting = field(default_factory=Counting)

    @property
    def status(self) -> Status:
        if self.error or any(c.internal_error for c in self.checks):
            return Status.GRADER_ERROR
        return Status.PROBLEMS if self.problems else Status.GRADED

    def status_text(self) -> str:
        """The status with its reason, for grades.csv and the class table: graded; timed out, out of memory,
        crashed (how), refused file, where the grader saw that happen; grader error (then no score)."""
        if self.status is Status.GRADER_ERROR:
            reason = self.error or next(o for c in self.checks if c.internal_error for o in c.outputs)
            return f"{Status.GRADER_ERROR.value}: {reason}"[:300]
        failed = [c for c in self.checks if not c.passed]
        kinds = [label for label, troubles in TROUBLE_LABELS if any(c.trouble in troubles for c in failed)]
        crash = next((c for c in failed if c.trouble in (CRASH, PROTOCOL)), None)
        if crash is not None and crash.detail:
            kinds[kinds.index("crashed")] = f"crashed ({crash.detail})"
        if any(p.endswith(REFUSED) for p in self.problems):
            kinds.append("refused file")
        text = ", ".join(kinds) or (Status.PROBLEMS.value if self.problems else Status.GRADED.value)
        if self.problems:
            text += ": " + "; ".join(self.problems)
        return text + (f" ({'; '.join(self.notes)})" if self.notes else "")

    def part_scores(self) -> dict[str, tuple[float, float]]:
        """part -> (score, maximum), in the order the checks ran."""
        scores: dict[str, tuple[float, float]] = {}
        for c in self.checks:
            got, most = scores.get(c.part, (0.0, 0.0))
            scores[c.part] = (got + c.score, most + c.max_score)
        return scores

    def checks_of(self, part: str) -> list[CheckResult]:
        return [c for c in self.checks if c.part == part]

    @property
    def total(self) -> float:
        """The score of the parts that count (`counting`): a self-check quiz is reported, not counted."""
        return self.score_leaving_out()[0]

    @property
    def max_score(self) -> float:
        return self.score_leaving_out()[1]

    def score_leaving_out(self, held: Collection[str] = ()) -> tuple[float, float]:
        """(score, maximum) of the parts that count but `held`: the one sum behind every total this package shows
        (grades.csv, the feedback page, the class report, Gradescope's results, the service's views)."""
        counted = [c for c in self.checks if self.counting.counts(c.part) and c.part not in held]
        return sum(c.score for c in counted), sum(c.max_score for c in counted)

    def held_parts(self) -> list[str]:
        """The counted parts held back until the due date (`Counting.held_back`), in the order the checks ran."""
        return [p for p in self.part_scores() if p in self.counting.held_back and self.counting.counts(p)]

    def uncounted_parts(self) -> list[str]:
        """The parts graded here whose scores the total leaves out, in the order the checks ran."""
        return [p for p in self.part_scores() if not self.counting.counts(p)]

    def answers(self) -> dict[str, list[str]]:
        """Each multiple-choice check's [option chosen, right option], by its name in results.json."""
        return {f"{c.part}/{c.name}": [c.chosen, c.right] for c in self.checks if c.right}

    def restore_answers(self, answers: Any) -> None:
        """Give the checks the options `answers()` recorded; anything but letters of the options is left out."""
        found = answers if isinstance(answers, dict) else {}
        for c in self.checks:
            pair = found.get(f"{c.part}/{c.name}")
            if isinstance(pair, list) and len(pair) == 2 and pair[0] in ("", *OPTIONS) and pair[1] in OPTIONS:
                c.chosen, c.right = pair

    # ---- serialised

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["counting"] = {key: sorted(parts) for key, parts in data["counting"].items()}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GradedSubmission":
        return cls(str(data["id"]), [CheckResult(**c) for c in data.get("checks", [])], list(data.get("problems", [])),
                   str(data.get("error", "")), float(data.get("seconds", 0.0)), dict(data.get("part_seconds", {})),
                   list(data.get("notes", [])), Tampering.from_json(data.get("tampering")),
                   float(data.get("busy_seconds", 0.0)), float(data.get("stopped_seconds", 0.0)),
                   float(data.get("cpu_seconds", 0.0)),
                   Counting(**{key: frozenset(map(str, parts)) for key, parts in data.get("counting", {}).items()}))

    def to_gradescope(self, visibility: "Visibility | None" = None) -> dict[str, Any]:
        """Gradescope's results.json: one test per check, each shown as `visibility` says; a summary (the
        total, each part, what was found in the upload); what Gradescope does not read goes in extra_data."""
        visibility = visibility or Visibility()
        lines = self.summary_lines()
        lines += [f"Note: {p}" for p in self.problems + self.notes]
        if self.error:
            lines.append(f"Not graded: {self.error}")
        return {"score": self.total, "execution_time": round(self.seconds, 3), "output": "\n".join(lines),
                "visibility": "visible", "stdout_visibility": "hidden",
                "tests": [c.to_gradescope(visibility.of(c, self.counting)) for c in self.checks],
                "extra_data": {"submission": self.id, "problems": self.problems, "notes": self.notes, "error": self.error,
                               "seconds": round(self.seconds, 3), "part_seconds": self.part_seconds,
                               "busy_seconds": round(self.busy_seconds, 3), "stopped_seconds": round(self.stopped_seconds, 3),
                               "cpu_seconds": round(self.cpu_seconds, 3), "uncounted": self.uncounted_parts(),
                               "internal_errors": [i for i, c in enumerate(self.checks) if c.internal_error]}}

    def summary_lines(self) -> list[str]:
        """The summary at the head of results.json's output, which Gradescope always shows: the total and
        each part's score, but never a held-back part's score (nor a total that holds it) before the due
        date; Gradescope hides the `score` field itself while any test is hidden."""
        held = self.held_parts()
        got, most = self.score_leaving_out(held)
        if held:
            marks = sum(self.part_scores()[p][1] for p in held)
            lines = [f"Total: {got:g} / {most:g} so far: the {' and '.join(held)} ({marks:g} points) is marked "
                     "after the due date"]
        else:
            lines = [f"Total: {got:g} / {most:g}"]
        for part, (score, top) in self.part_scores().items():
            if part in held:
                lines.append(f"{part}: marked after the due date")
            elif not self.counting.counts(part):
                lines.append(f"{part}: {score:g} / {top:g} (self-check: not counted in the total)")
            else:
                lines.append(f"{part}: {score:g} / {top:g}")
        return lines

    @classmethod
    def from_gradescope(cls, data: dict[str, Any]) -> "GradedSubmission":
        extra = data.get("extra_data") or {}
        checks = [CheckResult.from_gradescope(t) for t in data.get("tests", [])]
        for i in extra.get("internal_errors", []):
            checks[i].internal_error = True
        return cls(str(extra.get("submission", "")), checks, list(extra.get("problems", [])), str(extra.get("error", "")),
                   float(extra.get("seconds", 0.0)), dict(extra.get("part_seconds", {})), list(extra.get("notes", [])),
                   busy_seconds=float(extra.get("busy_seconds", 0.0)), stopped_seconds=float(extra.get("stopped_seconds", 0.0)),
                   cpu_seconds=float(extra.get("cpu_seconds", 0.0)),
                   counting=Counting(uncounted=frozenset(map(str, extra.get("uncounted", [])))))
