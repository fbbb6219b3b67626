"""One submission costs only itself: a class of one hostile or broken submission beside two honest
classmates is graded with exit 0, each classmate gets exactly the results it gets without it, grades.csv
and the class report are written, and the case costs about one --timeout, counted as a busy machine cannot
change it: the time limits of its calls that were stopped for running past them, and the CPU time the whole
run took (the grader's processes and what they waited for, by the kernel) beyond the same class without it,
at most what the case's own calls caused plus a little. With `--jobs 1`, so that a case holding the only CPU
slot shows; on the local pool and on a Dask cluster.

The cases are the adversarial suite's (tests/adversarial/catalogue.py) that went for the grader's own
side or its clock (a scan, a parser, a wait, a literal, an archive) and those that cost the most time,
plus a zip of four modules at the size limit that compresses to a few kilobytes.
"""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from adversarial.catalogue import BY_NAME, CORPUS, TWINS, materialize, write_twins

pytestmark = pytest.mark.slow

SECRET = "one-costs-only-itself"
TIMEOUT = 3.0  # --timeout
BUDGET = 8.0  # --budget
PARTS = "masks,quiz"
SLACK = 3.0  # CPU seconds: reading the case, its honest work outside its calls, and the run's own noise
# the cases that broke the grader's own side (issue 44), on both backends
OWN_SIDE = ("callback_stream", "threads_keep_cpu_busy", "long_sum", "nb_cell_source_not_text", "nb_colliding_integers",
            "nb_colliding_integers_quiz", "nb_helper_comment_line_separator", "zip_of_large_modules")
# the cases that cost the most time, on the local pool
SLOW = ("infinite_loop_at_import", "infinite_loop_in_function", "slow_import_then_loop", "sigterm_ignored_loop",
        "trickle_reply", "memory_bomb_in_function", "memory_creep", "os_exit_in_function", "print_flood")
TIMEOUTS = {"slow_import_then_loop": 2}  # --timeouts a case may cost: one, but a slow import and then a loop
BACKENDS = {"local": [], "dask": ["--dask", "local:1"]}
# The share of the class's own CPU time a case may add by making the run last longer: a Dask cluster's
# scheduler and worker spend CPU for as long as the run lasts, and a busy machine stretches that (in CI,
# beside the rest of the suite, the class without the case took 17.2 s, twice what it takes idle, and
# callback_stream added 12.1 s, 3.9 of them its calls; idle or beside two busy loops 3.2 to 5.6 s).
RUN_SHARE = {"local": 0.25, "dask": 0.5}
RUNS = [("local", name) for name in OWN_SIDE + SLOW] + [("dask", name) for name in OWN_SIDE]
MODULE_BYTES = 2 * 2**20 - 4096  # the modules of the zip that took a class 53 to 103 s (the limit then was 2 MiB)


def _zip_of_large_modules(folder: Path) -> Path:
    """Four modules of 2 MiB, each base.py and then short statements (the most nodes a byte buys the
    grader's scans): about 12 kB zipped."""
    base = (CORPUS / "base.py").read_text()
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(4):
            z.writestr(f"part{i}.py", base + "\n" + "x = 1\n" * ((MODULE_BYTES - len(base)) // 6))
    path = folder / "zip_of_large_modules.zip"
    path.write_bytes(archive.getvalue())
    return path


def _case(name: str, folder: Path) -> Path:
    if name == "zip_of_large_modules":
        return _zip_of_large_modules(folder)
    placeholders = {"ROOT": "/nonexistent", "OUT": "/nonexistent", "SUBS": str(folder), "HOME": "/nonexistent",
                    "TOKEN": "0", "INSTALL": "/nonexistent", "SECRETFILE": "/nonexistent",
                    "CALL_SECONDS": f"{TIMEOUT:g}", "REFERENCE_HASHES": "[]", "ROSTER_HASHES": "[]"}
    return materialize(BY_NAME[name], folder, placeholders)


def _grade(paths: list[Path], out: Path, backend: str) -> tuple[subprocess.CompletedProcess, float]:
    """The run, and the CPU seconds it took: its own and those of the processes it waited for (the kernel's count)."""
    command = [sys.executable, "-m", "autograder", "grade", *map(str, paths), "--out", str(out), "--jobs", "1",
               "--parts", PARTS, "--timeout", f"{TIMEOUT:g}", "--budget", f"{BUDGET:g}", "--quiet", *BACKENDS[backend]]
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, env={**os.environ, "AUTOGRADER_SECRET": SECRET})
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        run = subprocess.CompletedProcess(command, process.returncode, stdout.read().decode(), stderr.read().decode())
    return run, usage.ru_utime + usage.ru_stime


def _tests(out: Path, sid: str) -> dict[str, dict]:
    """A submission's checks by name, without the fields that time them."""
    data = json.loads((out / sid / "results.json").read_text())
    return {t["name"]: {k: v for k, v in t.items() if k not in ("execution_time", "extra_data")} for t in data["tests"]}


def _cost(out: Path, sid: str) -> tuple[float, float]:
    """(the time limits of its calls stopped for running past them, the CPU time its calls caused), as the grader
    counted them."""
    extra = json.loads((out / sid / "results.json").read_text()).get("extra_data", {})
    return float(extra.get("stopped_seconds", 0.0)), float(extra.get("cpu_seconds", 0.0))


def _alone(backend: str, folder: Path) -> dict:
    """The honest classmates graded without the case: their results and the run's CPU time."""
    folder.mkdir()
    run, cpu = _grade(write_twins(folder), folder / "out", backend)
    assert run.returncode == 0, run.stderr[-3000:]
    return {"cpu": cpu, "tests": {sid: _tests(folder / "out", sid) for sid in TWINS}}


@pytest.mark.parametrize("backend, name", RUNS)
def test_a_hostile_submission_costs_the_class_at_most_its_own_time(backend, name, tmp_path):
    assert name in BY_NAME or name == "zip_of_large_modules", f"no case {name} in tests/adversarial"
    without = _alone(backend, tmp_path / "alone")
    paths = write_twins(tmp_path)
    paths.insert(1, _case(name, tmp_path))  # between the classmates: the second waits for it with --jobs 1
    out = tmp_path / "out"
    run, cpu = _grade(paths, out, backend)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (out / "grades.csv").is_file() and (out / "class_report.html").is_file()
    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert set(TWINS) < set(rows) and len(rows) == len(TWINS) + 1, sorted(rows)
    case_id = next(sid for sid in rows if sid not in TWINS)
    assert not rows[case_id]["status"].startswith("grader error"), rows[case_id]["status"]
    for sid in TWINS:
        assert _tests(out, sid) == without["tests"][sid], sid
    stopped, calls = _cost(out, case_id)
    limits = TIMEOUTS.get(name, 1) * TIMEOUT + TIMEOUT  # after the first timeout, later calls together get one more
    assert stopped <= limits, f"{name} was stopped after {stopped:g} s of time limits (allowed {limits:g} s)"
    extra = cpu - without["cpu"]
    allowed = calls + SLACK + RUN_SHARE[backend] * without["cpu"]
    assert extra <= allowed, f"{name} cost the class {extra:.1f} CPU seconds (allowed {allowed:.1f}: its calls took {calls:.1f})"
