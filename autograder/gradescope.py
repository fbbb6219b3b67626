"""Gradescope as a first-class home: the autograder zip, built by one command, and what runs inside it.

    python -m autograder gradescope --out autograder.zip --secret-file SECRET [--visibility ...]

builds, from a checkout, a zip whose `setup.sh` (run once, as root, when Gradescope builds the
autograder's image) installs Python 3.11 where the image lacks it, the locked requirements and this
package from the wheel inside the zip (offline from `wheels/` when the zip carries them, `--wheels`),
and whose `run_autograder` (run for every upload) grades `/autograder/submission` and writes
`/autograder/results/results.json` (`python -m autograder gradescope --run /autograder`, below).

Inside Gradescope's container (Docker's default privileges, half a CPU, 768 MB) the sandboxes confine
themselves with Landlock; the secret is read from a file only root may read, handed to the class run
in this process (never on a command line or in an environment), and no sandbox's view holds it. Every root-relative
path takes `$AUTOGRADER_ROOT` (default /autograder), so the zip can be tried anywhere.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from pathlib import Path

from . import assignment
from .classrun import RunError, RunOptions, run_class
from .model.results import Visibility
from .nbgrader.counting import quiz_counting

SETUP_SH = """#!/usr/bin/env bash
# Run once by Gradescope, as root, when it builds the autograder's image (see autograder/gradescope.py).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
if ! command -v python3.11 >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11 python3.11-venv >/dev/null
fi
python3.11 -m venv "$ROOT/venv"
PIP=("$ROOT/venv/bin/python" -m pip --disable-pip-version-check --quiet)
if [ -d "$SOURCE/wheels" ]; then  # offline: every locked package is in the zip
    "${PIP[@]}" install --no-index --find-links "$SOURCE/wheels" -r "$SOURCE/requirements.lock"
else  # torch's CPU build first: PyPI's default is a CUDA build of several GB
    "${PIP[@]}" install --index-url https://download.pytorch.org/whl/cpu "$(grep '^torch==' "$SOURCE/requirements.lock")"
    "${PIP[@]}" install -r "$SOURCE/requirements.lock"
fi
"${PIP[@]}" install --no-deps --no-index "$SOURCE"/*.whl
chmod 600 "$SOURCE/secret.txt"  # root's alone: a sandbox runs as another uid, and Landlock's view leaves it out
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Run by Gradescope for every upload: grades $ROOT/submission, writes $ROOT/results/results.json.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
exec "$ROOT/venv/bin/python" -m autograder gradescope --run "$ROOT"
"""

CONFIG_FILE = "gradescope.json"
SECRET_FILE = "secret.txt"
MAX_RESULTS_BYTES = 1_000_000  # results.json, at most (`bounded`): a full-marks upload's is about 22 kB
# On the autograder's log, which only instructors see: item statistics compare students, and an upload is alone.
ONE_UPLOAD = ("Item statistics: none for one upload, graded alone as a class of one; grade the class's uploads "
              "together (python -m autograder grade) for items.csv and quiz_options.csv.")


@dataclass(frozen=True)
class Settings:
    """What the instructor chose for the course's autograder, kept in the zip."""

    visibility: str = "after_due_date"
    visible: tuple[str, ...] = ()
    max_submissions: int = 0  # 0: no limit
    timeout: float = 60.0
    # whether the quiz counts in the total, decided when the zip is built from the course's settings (the
    # nbgrader_config.py where it is built: nbgrader.counting); a counted quiz's checks and score are
    # then shown only after the due date. None (a zip from before): as the grader's release says.
    quiz_counts: bool | None = None


class GradescopeError(ValueError):
    """The zip cannot be built as asked (a usage error)."""


def build(out: Path, secret_file: Path, settings: Settings, wheels: Path | None = None) -> list[str]:
    """Write the autograder zip; returns its listing."""
    if assignment.CHECKOUT_ROOT is None:
        raise GradescopeError("the zip is built from a checkout of the project (it builds this package's wheel)")
    try:
        secret = secret_file.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise GradescopeError(f"{secret_file}: cannot read the course secret ({exc.strerror})") from None
    if not secret:
        raise GradescopeError(f"{secret_file} is empty: every student's inputs come from the course secret")
    found = sorted(p for p in wheels.iterdir() if p.is_file() and p.suffix in (".whl", ".gz", ".zip")) \
        if wheels is not None and wheels.is_dir() else []
    if wheels is not None and not found:  # else setup.sh would download every package on Gradescope
        raise GradescopeError(f"--wheels {wheels}: " + ("no package files (.whl) in it" if wheels.is_dir() else
                              "no such folder (docs/gradescope.md says how to fill it with the Linux x86-64, "
                              "Python 3.11 wheels of requirements.lock; or leave --wheels out to install from PyPI "
                              "on Gradescope)"))
    Visibility(settings.visibility, settings.visible)  # checks the choice
    if settings.quiz_counts is None:
        settings = replace(settings, quiz_counts=quiz_counting(None, Path.cwd()).counts)
    with tempfile.TemporaryDirectory(prefix="autograder-zip-") as work:
        wheel = _wheel(Path(work))
        names = {"setup.sh": SETUP_SH, "run_autograder": RUN_AUTOGRADER, SECRET_FILE: secret + "\n",
                 CONFIG_FILE: json.dumps(asdict(settings), indent=1) + "\n",
                 "requirements.lock": (assignment.CHECKOUT_ROOT / "requirements.lock").read_text(encoding="utf-8")}
        out.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, text in names.items():
                info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
                info.external_attr = (0o100755 if name in ("setup.sh", "run_autograder") else 0o100600) << 16
                archive.writestr(info, text)
            archive.write(wheel, wheel.name)
            for path in found:
                archive.write(path, f"wheels/{path.name}")
            return [f"{i.file_size:>12,}  {i.filename}" for i in archive.infolist()]


def _wheel(work: Path) -> Path:
    """This package's wheel, built from a copy of the checkout (which gets no build/ or egg-info)."""
    source = work / "source"
    assert assignment.CHECKOUT_ROOT is not None  # build() said so otherwise
    shutil.copytree(assignment.CHECKOUT_ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", "build", "*.egg-info", ".demo", ".pytest_cache", ".mypy_cache", "gradebook.db*",
        "node_modules", "*.zip"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                           "--quiet", "--wheel-dir", str(work / "wheel"), str(source)], capture_output=True, text=True)
    if done.returncode != 0:
        raise GradescopeError(f"building the wheel failed:\n{done.stderr[-2000:]}")
    (wheel,) = (work / "wheel").glob("*.whl")
    return wheel


def run(root: Path) -> int:
    """What run_autograder does: grade the upload as the zip's settings say, write results.json. Past
    the submission limit the upload is not graded: the feedback says so and the last score stands."""
    source, results = root / "source", root / "results"
    settings = Settings(**json.loads((source / CONFIG_FILE).read_text(encoding="utf-8")))
    results.mkdir(parents=True, exist_ok=True)
    previous = _previous_submissions(root)
    if settings.max_submissions and len(previous) >= settings.max_submissions:
        _write(results, _limit_reached(previous, settings.max_submissions))
        return 0
    with tempfile.TemporaryDirectory(prefix="grading-") as grading:
        out = Path(grading) / "out"
        options = RunOptions(out=out, paths=(root / "submission",), course_root=Path(grading),
                             secret=(source / SECRET_FILE).read_text(encoding="utf-8").strip(),
                             call_seconds=settings.timeout, visibility=Visibility(settings.visibility, tuple(settings.visible)),
                             quiz_counts=settings.quiz_counts, progress=False,
                             tell=lambda line: print(line, file=sys.stderr))
        try:
            status = run_class(options).status
            print(ONE_UPLOAD)
        except RunError as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = exc.status
        report = out / "submission" / "results.json"
        if not report.is_file():
            _write(results, {"score": 0.0, "output": "The autograder could not grade this upload; your instructor "
                                                      "has been told (see the autograder's log).",
                             "stdout_visibility": "hidden", "tests": []})
            return status or 1
        _write(results, bounded(json.loads(report.read_text(encoding="utf-8"))))
    return 0


def bounded(data: dict, limit: int = MAX_RESULTS_BYTES) -> dict:
    """results.json within `limit` bytes: first without the pictures' data (Gradescope shows none), then
    with each check's output cut short, saying so. Scores and statuses are never cut."""
    if _size(data) <= limit:
        return data
    for test in data.get("tests", []):
        (test.get("extra_data") or {}).pop("figures", None)
    room = max(200, (limit - _size({**data, "tests": []})) // max(1, len(data.get("tests", []))) - 400)
    for test in data.get("tests", []) if _size(data) > limit else []:
        if len(test.get("output", "")) > room:
            test["output"] = test["output"][:room] + "\n[cut short: the whole is in the grader's reports]"
    return data


def _size(data: dict) -> int:
    return len(json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8"))


def _previous_submissions(root: Path) -> list[dict]:
    """Gradescope's record of this student's earlier uploads (submission_metadata.json), oldest first: by
    `submission_time` where every one has a time that reads, else in the order Gradescope lists them."""
    try:
        meta = json.loads((root / "submission_metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found = meta.get("previous_submissions") if type(meta) is dict else None
    found = [p for p in found if type(p) is dict] if type(found) is list else []
    try:
        return sorted(found, key=lambda p: datetime.fromisoformat(p["submission_time"]).timestamp())
    except (KeyError, TypeError, ValueError):
        return found


def _limit_reached(previous: list[dict], limit: int) -> dict:
    """results.json for an upload past the limit: the last graded upload's results stand, its score and its
    tests (each check's feedback) as they were, with a note on top. An upload past the limit before this one
    carried them already: its note is replaced, not repeated."""
    last = found if type(found := previous[-1].get("results")) is dict else {}
    tests = [t for t in last.get("tests", []) if type(t) is dict] if type(last.get("tests")) is list else []
    score = previous[-1].get("score", last.get("score", 0.0))
    used = f"You have used all {limit} submissions allowed for this assignment"
    note = (f"{used}: this upload was not graded, and your last score ({score}) stands"
            + (", with its feedback below." if tests else "."))
    before = found if type(found := last.get("output")) is str else ""
    if before.startswith(used):  # the note of an earlier upload past the limit, on the same results
        before = before.partition("\n\n")[2]
    return {**last, "score": score, "tests": tests, "output": note + ("\n\n" + before if before else ""),
            "stdout_visibility": "hidden"}


def _write(results: Path, data: dict) -> None:
    (results / "results.json").write_text(json.dumps(data, indent=1, ensure_ascii=False), encoding="utf-8")


def seen_before_due_date(data: dict) -> dict:
    """What a student sees of a results.json before the due date, by Gradescope's documented rules
    (gradescope-autograders.readthedocs.io, specs, "Controlling Test Case Visibility"): the top-level output
    (at the top level's visibility), the tests whose visibility is "visible" (a test without one takes the
    top level's, "visible" by default), and the total score only while no test is hidden ("If test cases are
    hidden, students will not be able to see their total score")."""
    top = data.get("visibility", "visible")
    tests = [t for t in data.get("tests", []) if t.get("visibility", top) == "visible"]
    seen: dict = {"tests": tests}
    if top == "visible":
        seen["output"] = data.get("output", "")
        if len(tests) == len(data.get("tests", [])):
            seen["score"] = data.get("score")
    return seen


def check_results(data: dict) -> list[str]:
    """What is wrong with a results.json by Gradescope's documented format (empty: nothing)."""
    problems = []
    if type(data.get("score")) not in (int, float) and "tests" not in data:
        problems.append("neither a score nor tests")
    for key, kind in (("execution_time", (int, float)), ("output", str), ("visibility", str),
                      ("stdout_visibility", str), ("tests", list), ("extra_data", dict)):
        if key in data and not isinstance(data[key], kind):
            problems.append(f"{key} is not a {kind}")
    allowed = ("visible", "hidden", "after_due_date", "after_published")
    for key in ("visibility", "stdout_visibility"):
        if key in data and data[key] not in allowed:
            problems.append(f"{key} {data[key]!r}")
    for i, test in enumerate(data.get("tests", [])):
        for key, kind in (("score", (int, float)), ("max_score", (int, float)), ("name", str), ("output", str),
                          ("visibility", str), ("status", str)):
            if key in test and not isinstance(test[key], kind):
                problems.append(f"tests[{i}].{key} is not a {kind}")
        if test.get("visibility", "visible") not in allowed:
            problems.append(f"tests[{i}].visibility {test.get('visibility')!r}")
        if test.get("status", "passed") not in ("passed", "failed"):
            problems.append(f"tests[{i}].status {test.get('status')!r}")
    if len(json.dumps(data).encode()) > MAX_RESULTS_BYTES:
        problems.append(f"over {MAX_RESULTS_BYTES:,} bytes")
    return problems
