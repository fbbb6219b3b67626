"""What grading finds, in one model: each check's result and each submission's, with their status.

A `GradedSubmission` serialises itself: as JSON between a grading worker and the process that
writes the reports, and as Gradescope's results.json (which is also what a later run reads back
to resume, and what the nbgrader gradebook is written from).
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field
from typing import Any


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

    @property
    def score(self) -> float:
        return self.max_score if self.passed else 0.0

    def to_gradescope(self) -> dict[str, Any]:
        """A Gradescope test entry; its name starts with "<part>/"."""
        entry = {"name": f"{self.part}/{self.name}", "score": self.score, "max_score": self.max_score,
                 "status": "passed" if self.passed else "failed",
                 "output": "\n\n".join(self.outputs) if self.outputs else "Passed.", "visibility": "visible"}
        if self.figures:
            entry["extra_data"] = {"figures": self.figures}
        return entry

    @classmethod
    def from_gradescope(cls, test: dict[str, Any]) -> "CheckResult":
        part, _, name = str(test["name"]).partition("/")
        passed = test["status"] == "passed"
        figures = list((test.get("extra_data") or {}).get("figures", []))
        return cls(part, name, float(test["max_score"]), passed, [] if passed else [str(test.get("output", ""))],
                   figures=figures)


@dataclass
class GradedSubmission:
    """Every check of one submission, with what was wrong with its files."""

    id: str
    checks: list[CheckResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    error: str = ""  # why the grader could not grade it (a fault of ours)
    seconds: float = 0.0
    part_seconds: dict[str, float] = field(default_factory=dict)  # wall time of each part's checks

    @property
    def status(self) -> Status:
        if self.error or any(c.internal_error for c in self.checks):
            return Status.GRADER_ERROR
        return Status.PROBLEMS if self.problems else Status.GRADED

    def status_text(self) -> str:
        """The status with its reason, for grades.csv and the class table."""
        if self.status is Status.GRADER_ERROR:
            reason = self.error or next(o for c in self.checks if c.internal_error for o in c.outputs)
            return f"{Status.GRADER_ERROR.value}: {reason}"[:300]
        if self.status is Status.PROBLEMS:
            return f"{Status.PROBLEMS.value}: " + "; ".join(self.problems)
        return Status.GRADED.value

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
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.checks)

    # ---- serialised

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GradedSubmission":
        return cls(str(data["id"]), [CheckResult(**c) for c in data.get("checks", [])], list(data.get("problems", [])),
                   str(data.get("error", "")), float(data.get("seconds", 0.0)), dict(data.get("part_seconds", {})))

    def to_gradescope(self) -> dict[str, Any]:
        """Gradescope's results.json: one test per check; what Gradescope does not read goes in extra_data."""
        lines = [f"{part}: {got:g} / {most:g}" for part, (got, most) in self.part_scores().items()]
        lines += [f"Note: {p}" for p in self.problems]
        if self.error:
            lines.append(f"Not graded: {self.error}")
        return {"score": self.total, "output": "\n".join(lines), "visibility": "visible",
                "tests": [c.to_gradescope() for c in self.checks],
                "extra_data": {"submission": self.id, "problems": self.problems, "error": self.error,
                               "seconds": round(self.seconds, 3), "part_seconds": self.part_seconds,
                               "internal_errors": [i for i, c in enumerate(self.checks) if c.internal_error]}}

    @classmethod
    def from_gradescope(cls, data: dict[str, Any]) -> "GradedSubmission":
        extra = data.get("extra_data") or {}
        checks = [CheckResult.from_gradescope(t) for t in data.get("tests", [])]
        for i in extra.get("internal_errors", []):
            checks[i].internal_error = True
        return cls(str(extra.get("submission", "")), checks, list(extra.get("problems", [])), str(extra.get("error", "")),
                   float(extra.get("seconds", 0.0)), dict(extra.get("part_seconds", {})))
