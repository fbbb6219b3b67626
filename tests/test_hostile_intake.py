"""Issue 53's hostile intake, beside honest classmates, graded in a container's 1.5 GiB memory limit.

Before, each of these cost more than the student who handed it in: a Canvas name ending in `_<digits>` gave
one student's file to another; a Canvas upload named like a Blackboard attempt refused the class; a Moodle
folder that is a link left its student out without a word; a 0.6 MB zip holding a 128 MiB notebook of short
strings took the grader's own process to 2.2 GB (killed in 1.5 GiB: no grades at all); a zip listing 1.4
million members took 18 s and 1 GB; members named with 65,000 characters took 10 s each. Here all of them
are graded in one run, in a cgroup of 1.5 GiB (tests/hosts.py, Docker's defaults): exit status 0, each hostile
entry a row or a note that says why, and every honest classmate's results what they are graded alone.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

import hosts

pytestmark = pytest.mark.slow  # grading runs through `python -m autograder`, in a memory-limited cgroup

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "solutions" / "attention"
RELEASE = ROOT / "release" / "attention"
BASE = ROOT / "tests" / "corpus" / "base.py"
WRONG = "\n\ndef causal_average(T):\n    return torch.ones(T, T) / T\n"  # every row averages the future too
MEMORY = "1536M"
SECRET = "hostile-intake"
# Each honest classmate: where their files are in the class, and the name of the folder that holds them alone.
HONEST = {"12345": "canvas/leeann_12345_222_attention.ipynb", "67890": "canvas/smith_12345_67890_111_attention.ipynb",
          "45678": "canvas/nguyen_45678_333_hw_attempt_2024-01-01-12-00-00_attention.ipynb",
          "Ann Lee_101": "moodle/Ann Lee_101_assignsubmission_file", "alice": "class/alice", "bob": "class/bob"}


def _notebooks(folder: Path, source: Path = SOLUTIONS) -> None:
    folder.mkdir(parents=True)
    for name in ("attention", "quiz"):
        shutil.copy(source / f"{name}.ipynb", folder / f"{name}.ipynb")


def _many_strings_zip(path: Path) -> None:
    """A 0.6 MB zip holding a 128 MiB notebook: the answer key with 27 million short strings in its metadata."""
    key = (SOLUTIONS / "attention.ipynb").read_bytes()
    head = key[:key.rindex(b"}")] + b', "x": ['
    strings = (128 * 2**20 - len(head) - 8) // 5
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("attention.ipynb", head + b'"ab",' * strings + b'"ab"]}')
    assert path.stat().st_size < 2**20


def _many_members_zip(path: Path, members: int = 1_400_000) -> None:
    """A 64 MiB zip whose directory (ZIP64's end record) lists 1.4 million members, all of one local file."""
    name = b"a"
    local = struct.pack(zipfile.structFileHeader, zipfile.stringFileHeader, 20, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0) + name
    entry = struct.pack(zipfile.structCentralDir, zipfile.stringCentralDir, 20, 3, 20, 0, 0, 0, 0, 0, 0, 0, 0,
                        1, 0, 0, 0, 0, 0, 0) + name
    size = len(entry) * members
    with open(path, "wb") as fh:
        fh.write(local)
        for _ in range(members // 10_000):
            fh.write(entry * 10_000)
        fh.write(struct.pack(zipfile.structEndArchive64, zipfile.stringEndArchive64, 44, 45, 45, 0, 0, members,
                             members, size, len(local)))
        fh.write(struct.pack(zipfile.structEndArchive64Locator, zipfile.stringEndArchive64Locator, 0,
                             len(local) + size, 1))
        fh.write(struct.pack(zipfile.structEndArchive, zipfile.stringEndArchive, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF,
                             0xFFFFFFFF, 0))
    assert path.stat().st_size <= 64 * 2**20


def _class(root: Path) -> list[Path]:
    """The three PATHs of one run: a Canvas download, a Moodle download, a folder per student."""
    canvas = root / "canvas"
    canvas.mkdir()
    shutil.copy(SOLUTIONS / "attention.ipynb", root / HONEST["12345"])  # user 12345, named leeann
    shutil.copy(RELEASE / "attention.ipynb", root / HONEST["67890"])  # user 67890, named smith_12345: the stubs
    os.utime(root / HONEST["67890"], (2e9, 2e9))  # the newer: once graded as 12345's
    shutil.copy(SOLUTIONS / "attention.ipynb", root / HONEST["45678"])  # reads as a Blackboard attempt too
    _notebooks(root / HONEST["Ann Lee_101"])
    _notebooks(root / "elsewhere")
    (root / "moodle" / "Bo Chen_102_assignsubmission_file").symlink_to(root / "elsewhere")
    _notebooks(root / HONEST["alice"])
    (root / HONEST["bob"]).mkdir()
    (root / HONEST["bob"] / "solution.py").write_text(BASE.read_text() + WRONG)
    _many_strings_zip(root / "class" / "eve.zip")
    _many_members_zip(root / "class" / "mallory.zip")
    with zipfile.ZipFile(root / "class" / "trent.zip", "w") as archive:
        for i in range(20):
            archive.writestr("_" * 64_990 + f"{i:04d}.ipynb", "{}")
    return [canvas, root / "moodle", root / "class"]


def _alone(root: Path) -> list[Path]:
    """Each honest classmate's files in a folder of their own, named with their id."""
    paths = []
    for sid, where in HONEST.items():
        source = root / where
        folder = root / "alone" / sid
        if source.is_dir():
            shutil.copytree(source, folder)
        else:
            folder.mkdir(parents=True)
            shutil.copy2(source, folder / source.name)
        paths.append(folder)
    return paths


def _grade(paths: list[Path], out: Path, prefix: list[str] = ()) -> subprocess.CompletedProcess:
    command = [*prefix, sys.executable, "-m", "autograder", "grade", *map(str, paths), "--out", str(out),
               "--parts", "masks", "--jobs", "2"]
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "AUTOGRADER_SECRET": SECRET}
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600, env=env)


def _reports(out: Path) -> dict[str, dict]:
    """Each row of grades.csv, with its results.json checks."""
    with open(out / "grades.csv", newline="") as fh:
        rows = {row["submission"]: row for row in csv.DictReader(fh)}
    return {sid: {"row": row, "tests": json.loads((out / sid / "results.json").read_text())["tests"]}
            for sid, row in rows.items()}


@pytest.fixture(scope="module")
def runs() -> dict:
    """The class graded in a 1.5 GiB cgroup, and the honest classmates graded alone."""
    why = hosts.available("docker") or hosts.limits_available()
    if why:
        pytest.skip(f"no 1.5 GiB memory limit can be set here: {why}")
    root = Path(tempfile.mkdtemp(prefix="hostile-intake-", dir="/tmp"))
    root.chmod(0o777)
    try:
        paths = _class(root)
        among = _grade(paths, root / "out", hosts.command("docker", [], memory=MEMORY))
        alone = _grade(_alone(root), root / "alone-out")
        yield {"among": among, "alone": alone, "paths": paths,
               "graded": _reports(root / "out") if (root / "out" / "grades.csv").exists() else {},
               "graded alone": _reports(root / "alone-out") if alone.returncode == 0 else {},
               "report": (root / "out" / "class_report.html").read_text() if among.returncode == 0 else ""}
    finally:
        subprocess.run(["rm", "-rf", str(root)], check=False)


def test_the_class_is_graded_in_its_memory_limit_with_exit_0(runs):
    run = runs["among"]
    assert run.returncode == 0, run.stderr[-3000:]
    peak = re.search(r"hosts: peak memory of the command and all it started: (\d+) MiB", run.stderr)
    assert peak, run.stderr[-3000:]
    print(f"peak memory of the class's run: {peak[1]} MiB of {MEMORY}")
    assert set(runs["graded"]) == {*HONEST, "Bo Chen_102", "eve", "mallory", "trent"}, run.stderr[-3000:]


def test_each_hostile_entry_is_a_row_or_a_note_that_says_why(runs):
    statuses = {sid: entry["row"]["status"] for sid, entry in runs["graded"].items()}
    assert "eve.zip/attention.ipynb holds more than 2,000,000 JSON values" in statuses["eve"]
    assert "mallory.zip lists 1,400,000 members, over the limit of 10,000, so it was not read" in statuses["mallory"]
    assert "trent.zip: 20 member(s) named with more than 255 characters" in statuses["trent"]
    assert ("Bo Chen_102_assignsubmission_file is a symbolic link: links are never followed, so it was not read"
            in statuses["Bo Chen_102"])
    canvas = runs["paths"][0]
    note = (f"smith_12345_67890_111_attention.ipynb in {canvas}: its name reads as user 12345 (named smith) or user "
            "67890 (named smith_12345); graded as user 67890's: user 12345's other files have them named leeann")
    assert f"note: {note}" in runs["among"].stderr.splitlines()
    assert "Who handed in what" in runs["report"] and "graded as user 67890&#x27;s" in runs["report"]


def test_every_honest_classmate_gets_what_they_get_alone(runs):
    assert runs["alone"].returncode == 0, runs["alone"].stderr[-3000:]
    for sid in HONEST:
        among, alone = runs["graded"][sid], runs["graded alone"][sid]
        assert among["tests"] == alone["tests"], sid
        assert {c: among["row"][c] for c in ("masks", "status")} == {c: alone["row"][c] for c in ("masks", "status")}
    assert runs["graded"]["12345"]["row"]["masks"] != runs["graded"]["67890"]["row"]["masks"]  # each their own file
