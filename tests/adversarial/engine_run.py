"""The adversarial suite's only use of the grader's internals (everything else goes through the command line).

Run as `python tests/adversarial/engine_run.py [--installed]` with a JSON job on stdin; prints one JSON object.
Without --installed, this checkout's autograder is imported (it goes first on sys.path); with it, the
interpreter's installed copy. Jobs, by "op":

- "grade" {"paths", "parts", "secret", "limits": {Limits field: value}}: grades the submissions one
  after another through the engine with short limits; for each, in order, its id, the seconds it
  took, what a busy machine added to its limits ("busy"), the limits of its calls stopped for running past
  them ("stopped"), the CPU time its calls caused ("cpu") and its checks in the Gradescope shape (plus
  "internal" for a grader error). One zygote
  serves them all, as in a grading worker, so a crash that leaked into the next submission would show.
- "weaknesses" {}: what this machine's sandbox cannot do (none, as root or with user namespaces).
- "sandbox" {"count", "code"}: the seconds each of `count` fresh sandboxes took to spawn and load
  nothing, then what `facts()` returns in one more that loaded `code`.

When the engine's API changes, this file is the one to adapt.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # a test harness: it leaves no __pycache__ in the project
if "--installed" not in sys.argv:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # this checkout's autograder, not another install


def _package() -> Path:
    import autograder

    return Path(autograder.__file__).resolve().parent.parent  # the checkout, or site-packages when installed


def _new_api() -> bool:
    """Whether this autograder has the engine of issue 14 (looked up in its own folder: an editable install's
    finder would find another checkout's autograder.engine)."""
    import autograder

    package = Path(autograder.__file__).resolve().parent
    return (package / "engine" / "session.py").exists() or (package / "core" / "session.py").exists()


def grade_job(job: dict) -> dict:
    paths = [Path(p) for p in job["paths"]]
    secrets = sorted({str(p.resolve().parent) for p in paths})
    results = []
    if _new_api():
        from autograder.engine.session import Job, grade_one, sandbox_backend
        from autograder.model.submission import public_files, read_submission, setup_imports
        from autograder.isolation.limits import Limits
        from autograder.isolation.sandbox import Zygote

        limits = Limits(**{"budget_seconds": 600.0, **job["limits"]})
        zygote = Zygote(limits, secrets, public_files(), setup_imports())
        try:
            weaknesses = zygote.wait_ready()
            for path in paths:
                start = time.perf_counter()
                graded = grade_one(Job(read_submission(path), job["secret"], tuple(job["parts"])), sandbox_backend(zygote),
                                   limits)
                results.append({"id": graded.id, "seconds": time.perf_counter() - start, "busy": graded.busy_seconds,
                                "stopped": graded.stopped_seconds, "cpu": graded.cpu_seconds, "problems": graded.problems,
                                "tests": [{**c.to_gradescope(), "internal": c.internal_error} for c in graded.checks]})
        finally:
            zygote.close()
        return {"weaknesses": weaknesses, "results": results}

    from autograder.engine import grade, sandbox_backend
    from autograder.sandbox import Limits, Zygote
    from autograder.submission import ASSIGNMENT_DIR, PUBLIC_HELPERS, read_submission

    package = _package()
    hidden = [package / "attention_ref", package / "autograder" / "graders", package / "assignments",
              package / "solutions", package / "tests", *map(Path, secrets)]
    public = [ASSIGNMENT_DIR / name for name in PUBLIC_HELPERS if (ASSIGNMENT_DIR / name).exists()]
    zygote = Zygote(Limits(**job["limits"]), [h for h in hidden if h.is_dir()], public)
    try:
        for path in paths:
            start = time.perf_counter()
            graded = grade(read_submission(path), job["secret"], tuple(job["parts"]), sandbox_backend(zygote))
            results.append({"id": graded.submission.id, "seconds": time.perf_counter() - start,
                            "problems": graded.submission.problems,
                            "tests": [{**c.as_gradescope(), "internal": c.internal_error} for c in graded.checks]})
    finally:
        zygote.close()
    return {"weaknesses": zygote.weaknesses, "results": results}


class _Sandboxes:
    """A zygote and fresh students from it, whichever engine this is."""

    def __init__(self, call_seconds: float, secrets: list[Path]):
        self.new = _new_api()
        if self.new:
            from autograder.isolation.sandbox import Limits, Zygote

            self.zygote = Zygote(Limits(call_seconds=call_seconds), secrets)
            self.weaknesses = self.zygote.wait_ready()
        else:
            from autograder.sandbox import Limits, Zygote

            self.zygote = Zygote(Limits(call_seconds=call_seconds), [s for s in secrets if s.is_dir()], [])
            self.weaknesses = self.zygote.weaknesses
        self.call_seconds = call_seconds

    def student(self):
        """(a student in a fresh sandbox, its closer)."""
        if self.new:
            from autograder.isolation.limits import Limits
            from autograder.isolation.proxy import Clock, Student
            from autograder.isolation.sandbox import SandboxChannel

            try:
                from autograder.isolation.sandbox import Loads
            except ImportError:  # an engine that loaded the code again for every part
                channel = SandboxChannel(self.zygote)
                clock = Clock(Limits(call_seconds=self.call_seconds, budget_seconds=600.0))
                return Student(channel, clock, channel.close), channel.close
            loads = Loads(self.zygote)
            channel = SandboxChannel(loads)

            def close() -> None:
                channel.close()
                loads.close()

            return Student(channel, Clock(Limits(call_seconds=self.call_seconds, budget_seconds=600.0)), close), close
        from autograder.sandbox import SandboxChannel
        from autograder.student import Student

        channel = SandboxChannel(self.zygote)
        return Student(channel), channel.close

    def close(self) -> None:
        self.zygote.close()


def weaknesses_job(job: dict) -> dict:
    sandboxes = _Sandboxes(10, [])
    sandboxes.close()
    return {"weaknesses": sandboxes.weaknesses}


def sandbox_job(job: dict) -> dict:
    """`count` fresh sandboxes spawned and timed, then `code` loaded in one more and its facts() called."""
    package = _package()
    sandboxes = _Sandboxes(job.get("call_seconds", 10), [package / "attention_ref", package / "autograder" / "graders"])
    times = []
    try:
        for _ in range(job["count"]):
            start = time.perf_counter()
            student, close = sandboxes.student()
            student.load([], [])
            close()
            times.append(time.perf_counter() - start)
        student, close = sandboxes.student()
        errors = student.load([("facts", job["code"])], [])
        errors = getattr(student, "load_errors", None) or errors
        facts = student.call("facts") if not errors else {"load errors": errors}
        close()
    finally:
        sandboxes.close()
    return {"times": times, "facts": facts, "weaknesses": sandboxes.weaknesses}


def main() -> int:
    job = json.load(sys.stdin)
    op = job.get("op", "grade")
    result = {"grade": grade_job, "weaknesses": weaknesses_job, "sandbox": sandbox_job}[op](job)
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
