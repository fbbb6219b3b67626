"""Hostile and broken submissions, graded next to honest ones (see tests/adversarial/README.md).

For every case the grader finishes with exit status 0, the honest submissions
graded in the same run keep exactly the results they get in a run without the
hostile ones, and the hostile submission earns no point its honest code would
not. The sandbox is probed from inside (what a submission can read, write,
signal or send), and afterwards nothing it tried may be left on the machine:
no file outside its scratch folder, no process.

Most cases go through the command line, as a course would grade them. Cases
that need short limits (infinite loops, memory creep) go through
`engine.grade` with a zygote of their own (tests/adversarial/engine_run.py).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder import sandbox, wire
from autograder.student import Student

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).parent / "adversarial"
CORPUS = Path(__file__).parent / "corpus"
SOURCE_NOTEBOOK = ROOT / "assignments" / "attention" / "attention.ipynb"
PARTS = ("masks", "scaling", "heads")
ENGINE_PARTS = ("masks",)
ENGINE_LIMITS = {"call_seconds": 2.0, "cpu_seconds": 30, "memory_bytes": 2**30, "processes": 64}
TOKEN = str(random.randrange(10**8, 10**9))  # digits: it is also a `sleep` argument
SECRET = f"s3cr3t-{TOKEN}"
TWINS = {"base": "", "buggy_masks_fill_zero": (CORPUS / "buggy" / "masks_fill_zero.py").read_text()}
PROTECTED = [ROOT / "autograder" / "graders" / "test_masks.py", ROOT / "attention_ref" / "masks.py"]


@dataclass(frozen=True)
class Case:
    """One hostile or broken submission and what it must score."""

    name: str
    why: str
    earns: str
    runner: str = "cli"
    position: str = "bottom"
    feedback: str = ""
    known_issue: str = ""  # a grader bug this case finds, owned elsewhere: its test is expected to fail until fixed
    notebook: bytes | None = None  # a notebook case carries its file; the others are patches of base.py
    patch: str = ""


def _patch_cases() -> list[Case]:
    cases = []
    for path in sorted((HERE / "cases").glob("*.py")):
        text = path.read_text()
        header = dict(re.findall(r"^# ([\w-]+): (.*)$", text.split("\n\n", 1)[0], re.M))
        cases.append(Case(path.stem, header["why"], header["earns"], header.get("runner", "cli"),
                          header.get("position", "bottom"), header.get("feedback", ""), header.get("known-issue", ""),
                          patch=text))
    return cases


def _notebook_cases() -> list[Case]:
    """Notebooks: the source notebook (answers included) broken or tampered with."""
    text = SOURCE_NOTEBOOK.read_text()
    notebook = json.loads(text)
    cells = notebook["cells"]

    def grade_id(cell: dict) -> str:
        return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")

    def index(gid: str) -> int:
        return next(i for i, c in enumerate(cells) if grade_id(c) == gid)

    def with_source(cell: dict, source: str) -> dict:
        return {**json.loads(json.dumps(cell)), "source": source}

    edited = json.loads(json.dumps(cells))
    wrong_average = with_source(cells[index("masks-causal_average")], "def causal_average(T):\n    return torch.zeros(T, T)\n")
    wrong_padding = with_source(cells[index("masks-padding_mask")], "def padding_mask(lengths, T):\n    return None\n")
    edited.insert(index("masks-causal_average") + 1, wrong_average)  # a later duplicate is ignored
    edited.insert(index("masks-padding_mask"), wrong_padding)  # an earlier one is what is graded
    edited = [c for c in edited if grade_id(c) != "masks-causal_mask"]
    cut_and_copied = {**notebook, "cells": edited}

    hostile = json.loads(json.dumps(cells))
    setup = index("setup")
    hostile[setup] = with_source(cells[setup], "import os\nos._exit(1)\n")  # the source's setup cell is run instead
    kill = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos._exit(1)\n"}
    fake_answer = {**kill, "metadata": {"nbgrader": {"grade_id": "masks-extra", "solution": True, "grade": False}}}
    fake_grade = {**kill, "metadata": {"nbgrader": {"grade_id": "grade-masks", "solution": False, "grade": True}}}
    hostile[setup + 1:setup + 1] = [kill, fake_answer, fake_grade]
    tampered = {**notebook, "cells": hostile}

    return [
        Case("nb_corrupt_json", "the notebook's JSON is cut in half", "nothing", feedback="not defined",
             notebook=text[: len(text) // 2].encode()),
        Case("nb_deleted_and_duplicated_cells", "the causal_mask answer cell deleted; causal_average duplicated after "
             "(ignored), padding_mask duplicated wrong before (graded)", "zero-on causal_mask, padding_mask",
             notebook=json.dumps(cut_and_copied).encode()),
        Case("nb_code_outside_answer_cells", "os._exit in the setup cell, in a plain code cell, in an answer cell the "
             "source does not have and in a grade cell: none of them may run", "base",
             notebook=json.dumps(tampered).encode()),
    ]


CASES = _patch_cases() + _notebook_cases()
BY_NAME = {c.name: c for c in CASES}


def _source(case: Case, placeholders: dict[str, str]) -> bytes:
    if case.notebook is not None:
        return case.notebook
    base = (CORPUS / "base.py").read_text()
    text = case.patch + "\n\n" + base if case.position == "top" else base + "\n\n" + case.patch
    for key, value in placeholders.items():
        text = text.replace(f"@{key}@", value)
    return text.encode()


def _write_twins(folder: Path) -> None:
    base = (CORPUS / "base.py").read_text()
    for name, patch in TWINS.items():
        (folder / f"{name}.py").write_text(base + ("\n\n" + patch if patch else ""))


def _grade_cli(subs: Path, out: Path, extra_env: dict[str, str] | None = None, parts=PARTS, timeout: float = 10,
               prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "AUTOGRADER_SECRET": SECRET, **(extra_env or {})}  # the secret never on a command line
    command = [*(prefix or []), sys.executable, "-m", "autograder", "grade", *sorted(map(str, subs.iterdir())),
               "--out", str(out), "--jobs", "2", "--parts", ",".join(parts), "--timeout", str(timeout), "--quiet"]
    return subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, cwd=ROOT)


def _read_reports(out: Path) -> dict[str, dict]:
    """grades.csv rows and results.json checks by submission (no checks where the grader could not write them)."""
    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    results = {sid: out / sid / "results.json" for sid in rows}
    return {sid: {"row": row, "tests": json.loads(results[sid].read_text())["tests"] if results[sid].exists() else []}
            for sid, row in rows.items()}


def _digests(paths: list[Path]) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _marked_processes() -> list[str]:
    """Processes left by the fork-storm cases, found by the name or argument they carry."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if comm == f"advstorm{TOKEN}"[:15] or cmdline == f"sleep\0{TOKEN}\0".encode():
            found.append(f"{entry.name} {comm}")
    return found


def _marker_files(shallow: list[Path], deep: list[Path]) -> list[Path]:
    """Files the cases tried to leave behind: every name they write carries the token."""
    found = [p for place in shallow if place.is_dir() for p in place.glob(f"*{TOKEN}*")]
    return found + [p for place in deep for p in place.rglob(f"*{TOKEN}*")]


@pytest.fixture(scope="session")
def weaknesses() -> list[str]:
    """What this machine's sandbox cannot do (nothing, as root or with user namespaces)."""
    zygote = sandbox.Zygote(sandbox.Limits(), [], [])
    zygote.close()
    return zygote.weaknesses


@pytest.fixture(scope="session")
def runs(tmp_path_factory, weaknesses) -> dict:
    """One run of the honest submissions alone, one with every command-line case, one through the engine."""
    if weaknesses:  # these cases write into the project, kill processes and fork hundreds of times
        pytest.skip(f"a weaker sandbox here would let hostile cases harm this machine: {'; '.join(weaknesses)}")
    work = tmp_path_factory.mktemp("adversarial")
    honest, subs, engine_subs = work / "honest", work / "subs", work / "engine_subs"
    for folder in (honest, subs, engine_subs):
        folder.mkdir()
    out, honest_out = work / "out", work / "honest_out"
    placeholders = {"ROOT": str(ROOT), "OUT": str(out), "SUBS": str(subs), "TOKEN": TOKEN, "HOME": str(Path.home())}
    _write_twins(honest)
    _write_twins(subs)
    _write_twins(engine_subs)
    engine_paths = []
    for case in CASES:
        suffix = ".ipynb" if case.notebook is not None else ".py"
        if case.runner == "engine":
            path = engine_subs / f"{case.name}{suffix}"
            path.write_bytes(_source(case, {**placeholders, "SUBS": str(engine_subs)}))
            engine_paths += [path, engine_subs / "base.py"]  # base right after each: a crash must not carry over
        else:
            (subs / f"{case.name}{suffix}").write_bytes(_source(case, placeholders))
        if case.earns == "as twin":  # the same code without its cheats, graded in the same run
            honest_case = Case(case.name, case.why, "", patch=re.sub(r"^.*# cheat$\n?", "", case.patch, flags=re.M))
            (subs / f"{case.name}__twin.py").write_bytes(_source(honest_case, placeholders))
    protected = _digests(PROTECTED + [subs / "buggy_masks_fill_zero.py"])

    honest_run = _grade_cli(honest, honest_out)
    assert honest_run.returncode == 0, honest_run.stderr[-3000:]
    start = time.perf_counter()
    hostile_run = _grade_cli(subs, out)
    cli_seconds = time.perf_counter() - start
    engine = subprocess.run([sys.executable, str(HERE / "engine_run.py")], capture_output=True, text=True, timeout=900,
                            cwd=ROOT, env={**os.environ, "AUTOGRADER_SECRET": SECRET},
                            input=json.dumps({"paths": [str(p) for p in engine_paths], "parts": ENGINE_PARTS,
                                              "secret": SECRET, "limits": ENGINE_LIMITS}))
    assert engine.returncode == 0, engine.stderr[-3000:]
    engine_results = json.loads(engine.stdout)
    return {
        "work": work, "out": out, "subs": subs, "honest": _read_reports(honest_out), "cli": hostile_run,
        "cli_seconds": cli_seconds, "graded": _read_reports(out),
        "engine": engine_results, "protected": protected, "strays": _marked_processes(),
        "markers": _marker_files([Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), ROOT, ROOT / "autograder", Path.home()],
                                 [work]),
    }


def _results(runs: dict, name: str) -> list[dict]:
    """The checks of submission `name` (for the engine, the first time it was graded)."""
    if BY_NAME.get(name) and BY_NAME[name].runner == "engine":
        return next(r["tests"] for r in runs["engine"]["results"] if r["id"] == name)
    return runs["graded"][name]["tests"]


def _subject(check_name: str) -> set[str]:
    """The functions a check is about: the words before its colon."""
    return set(re.findall(r"\w+", check_name.split("/", 1)[1].split(":")[0]))


def _probe(tests: list[dict]) -> dict:
    for test in tests:
        found = re.search(r"PROBE (\{.*?\})\s*$", test["output"], re.M)
        if found:
            return json.loads(found.group(1))
    raise AssertionError("the case did not report its probe:\n" + "\n".join(t["output"] for t in tests)[:3000])


def test_grader_exits_0_with_every_hostile_submission(runs):
    twins = {f"{c.name}__twin" for c in CASES if c.earns == "as twin"}
    assert set(runs["graded"]) == {*TWINS, *twins, *(c.name for c in CASES if c.runner == "cli")}
    statuses = {sid: entry["row"]["status"] for sid, entry in runs["graded"].items()}
    errors = {sid for sid, status in statuses.items() if status.startswith("grader error")}
    known = {c.name for c in CASES if c.known_issue}
    assert errors <= known, {sid: statuses[sid] for sid in errors - known}
    if not errors:
        assert runs["cli"].returncode == 0, runs["cli"].stderr[-3000:]


def test_honest_submissions_keep_exactly_their_results(runs):
    for sid in TWINS:
        alone, among = runs["honest"][sid], runs["graded"][sid]
        assert among["tests"] == alone["tests"], sid
        assert among["row"] == alone["row"], sid


@pytest.mark.parametrize("name", [pytest.param(c.name, marks=pytest.mark.xfail(reason=c.known_issue, strict=True))
                                  if c.known_issue else c.name for c in CASES])
def test_case_earns_nothing_unearned(runs, name):
    case = BY_NAME[name]
    if case.runner == "cli":
        assert not runs["graded"][name]["row"]["status"].startswith("grader error"), runs["graded"][name]["row"]
    tests = _results(runs, name)
    base = {t["name"]: t["score"] for t in runs["honest"]["base"]["tests"] if t["name"].split("/")[0] in
            (ENGINE_PARTS if case.runner == "engine" else PARTS)}
    got = {t["name"]: t["score"] for t in tests}
    assert set(got) == set(base), "not the same checks as base.py"
    internal = [t["output"] for t in tests if "Internal grader error" in t["output"] or t.get("internal")]
    assert not internal, internal
    kind, _, arg = case.earns.partition(" ")
    if kind == "base":
        assert got == base, {n: s for n, s in got.items() if s != base[n]}
    elif kind == "nothing":
        assert not any(got.values()), {n: s for n, s in got.items() if s}
    elif kind == "zero-on":
        functions = {f.strip() for f in arg.split(",")}
        for check, score in got.items():
            want = 0 if _subject(check) & functions else base[check]
            assert score == want, f"{check}: {score}, expected {want}\n" + next(t["output"] for t in tests if t["name"] == check)
        assert any(_subject(check) & functions for check in got), f"no check is about {functions}"
    elif kind == "as":
        twin_tests = runs["graded"][f"{name}__twin"] if arg == "twin" else runs["honest"][arg.replace("/", "_")]
        twin = {t["name"]: t["score"] for t in twin_tests["tests"]}
        assert all(score <= twin[check] for check, score in got.items()), {n: (s, twin[n]) for n, s in got.items() if s > twin[n]}
    else:
        assert kind == "any", case.earns
    if case.feedback:
        failed = "\n".join(t["output"] for t in tests if t["status"] == "failed")
        assert case.feedback in failed, f"{case.feedback!r} not in:\n{failed[:3000]}"


def test_every_case_is_graded_quickly_enough(runs):
    """The whole command-line run (about 30 submissions on 2 workers) stays well under its time limits."""
    assert runs["cli_seconds"] < 300
    seconds = {r["id"]: r["seconds"] for r in runs["engine"]["results"]}
    assert seconds["huge_expanded_tensor_timed"] < 20, "an expand() was materialised"
    for name in ("infinite_loop_at_import", "infinite_loop_in_function", "sigterm_ignored_loop", "trickle_reply"):
        assert seconds[name] < 40, f"{name} took {seconds[name]:.0f} s: a timeout was not enforced"


def test_a_crash_never_reaches_the_next_submission(runs):
    full = {t["name"]: t["score"] for t in runs["honest"]["base"]["tests"] if t["name"].startswith("masks/")}
    bases = [r for r in runs["engine"]["results"] if r["id"] == "base"]
    assert len(bases) == sum(c.runner == "engine" for c in CASES)
    for graded in bases:
        assert {t["name"]: t["score"] for t in graded["tests"]} == full


def test_sandbox_hides_the_graders_the_answers_and_the_secret(runs):
    found = _probe(_results(runs, "read_secrets"))
    leaks = {k: v for k, v in found.items() if isinstance(v, str) and not v.startswith("no")}
    assert not leaks, leaks
    assert found["secret"] == [], found["secret"]
    assert found["memory scanned MB"] > 0
    assert found["visible pids"] == [1], found["visible pids"]
    assert set(found["home listing"]) <= _python_in_home(), found["home listing"]
    everything = "\n".join(p.read_text(errors="replace") for p in runs["out"].rglob("*") if p.is_file())
    assert SECRET not in everything


def _python_in_home() -> set[str]:
    """The entries of the grader's home a sandbox may see: those leading to Python and its packages."""
    import torch

    home = Path.home().resolve()
    names = set()
    for folder in (sys.prefix, sys.base_prefix, Path(torch.__file__).parent.parent):
        path = Path(folder).resolve()
        if path.is_relative_to(home) and path != home:
            names.add(path.relative_to(home).parts[0])
    return names


def test_nothing_is_left_outside_the_scratch_folder(runs):
    assert runs["markers"] == [], runs["markers"]
    assert _digests(list(runs["protected"])) == runs["protected"]
    assert not list(runs["out"].rglob(".*.tmp*")), "a report was left half written"
    for results in runs["out"].glob("*/results.json"):
        json.loads(results.read_text())  # whole, never half written
        assert results.stat().st_size < 500_000, f"{results} is bloated"


def test_no_process_outlives_grading(runs):
    assert runs["strays"] == [], runs["strays"]


def test_forks_stay_within_the_process_limit(runs):
    forked = _probe(_results(runs, "fork_storm_over_limit"))["forked"]
    assert 0 < forked < ENGINE_LIMITS["processes"]


def test_a_reference_part_cannot_be_smuggled_between_parts(runs):
    heads = [t for t in _results(runs, "smuggle_reference") if t["name"].startswith("heads/")]
    assert heads and not any(t["score"] for t in heads)
    assert "not implemented" in heads[0]["output"]


def test_notebook_problems_are_reported(runs):
    problems = {sid: runs["graded"][sid]["row"]["status"] for sid in ("nb_corrupt_json", "nb_deleted_and_duplicated_cells")}
    assert "unreadable notebook" in problems["nb_corrupt_json"]
    assert "masks-causal_mask is missing" in problems["nb_deleted_and_duplicated_cells"]
    assert "appears more than once" in problems["nb_deleted_and_duplicated_cells"]


# ---- the sandbox itself ------------------------------------------------------------


@pytest.fixture(scope="module")
def zygote():
    z = sandbox.Zygote(sandbox.Limits(call_seconds=10), [ROOT / "attention_ref", ROOT / "autograder" / "graders"], [])
    yield z
    z.close()


def test_spawning_a_sandbox_stays_cheap(zygote):
    load = wire.encode({"op": "load", "target": None, "args": [], "kwargs": {}, "cells": [], "inject": []})
    times = []
    for _ in range(25):
        start = time.perf_counter()
        channel = sandbox.SandboxChannel(zygote)
        assert wire.decode(channel(load))["ok"]
        channel.close()
        times.append(time.perf_counter() - start)
    assert statistics.median(times[1:]) < 0.1, times


def test_a_sandbox_has_no_capabilities_and_no_network(zygote):
    code = """
import os, socket, subprocess
def facts():
    status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
    try:
        socket.create_connection(("127.0.0.1", 22), timeout=1)
        network = "connected"
    except OSError as exc:
        network = type(exc).__name__
    shell = subprocess.run(["sh", "-c", "grep CapEff /proc/self/status; umount /proc 2>&1; id -u"],
                           capture_output=True, text=True)
    return {"CapEff": status["CapEff"].strip(), "NoNewPrivs": status["NoNewPrivs"].strip(), "uid": os.getuid(),
            "network": network, "shell": shell.stdout, "pid": os.getpid()}
"""
    if zygote.weaknesses:
        pytest.skip(f"weaker sandbox here: {zygote.weaknesses}")
    student = Student(sandbox.SandboxChannel(zygote))
    assert student.load([("facts", code)], []) == []
    facts = student.call("facts")
    assert facts["CapEff"] == "0000000000000000" and facts["NoNewPrivs"] == "1", facts
    assert "CapEff:\t0000000000000000" in facts["shell"], facts  # a program it runs gets no capability back
    assert facts["pid"] == 1 and facts["network"] != "connected", facts
    if os.geteuid() == 0:
        assert facts["uid"] >= sandbox.SANDBOX_UID_BASE, facts


# ---- as a normal user, and where the system allows no namespaces ---------------------

needs_root = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="emulated with unshare, as root")


def _small_class(folder: Path, names: list[str], placeholders: dict[str, str]) -> Path:
    subs = folder / "subs"
    subs.mkdir()
    _write_twins(subs)
    for name in names:
        (subs / f"{name}.py").write_bytes(_source(BY_NAME[name], placeholders))
    return subs


@needs_root
def test_as_a_normal_user_the_sandbox_still_isolates(tmp_path, base_alone):
    """A normal user (uid 1000 in a user namespace of its own) gets user and PID namespaces: the same protection."""
    out = tmp_path / "out"
    subs = _small_class(tmp_path, ["read_secrets", "kill_everything"], {"ROOT": str(ROOT), "OUT": str(out),
                        "SUBS": str(tmp_path / "subs"), "TOKEN": TOKEN, "HOME": str(Path.home())})
    run = _grade_cli(subs, out, parts=("masks",), prefix=["unshare", "--user", "--map-user=1000", "--map-group=1000"])
    assert run.returncode == 0, run.stderr[-3000:]
    assert "weaker sandbox" not in run.stderr, run.stderr
    graded = _read_reports(out)
    assert graded["base"]["tests"] == base_alone
    found = _probe(graded["read_secrets"]["tests"])
    assert not {k: v for k, v in found.items() if isinstance(v, str) and not v.startswith("no")}, found
    assert found["secret"] == [] and found["visible pids"] == [1], found
    assert set(found["home listing"]) <= _python_in_home(), found["home listing"]
    assert all(t["score"] == t["max_score"] for t in graded["kill_everything"]["tests"])


@pytest.fixture(scope="module")
def base_alone(tmp_path_factory) -> list[dict]:
    """base.py's masks checks graded on its own, as root: what the emulated runs must match."""
    folder = tmp_path_factory.mktemp("alone")
    (folder / "subs").mkdir()
    (folder / "subs" / "base.py").write_text((CORPUS / "base.py").read_text())
    run = _grade_cli(folder / "subs", folder / "out", parts=("masks",))
    assert run.returncode == 0, run.stderr[-3000:]
    return _read_reports(folder / "out")["base"]["tests"]


@needs_root
def test_without_namespaces_grading_still_works_and_says_so_once(tmp_path, base_alone):
    """Root of a container that allows no new namespaces: weaker isolation, one line on stderr, the same scores."""
    out = tmp_path / "out"
    subs = _small_class(tmp_path, [], {})
    forbid = "; ".join(f"echo 0 > /proc/sys/user/max_{kind}_namespaces" for kind in ("pid", "mnt", "net", "ipc", "user"))
    run = _grade_cli(subs, out, parts=("masks",),
                     prefix=["unshare", "--user", "--map-root-user", "sh", "-c", f'{forbid}; exec "$@"', "sh"])
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stderr.count("weaker sandbox") == 1, run.stderr
    graded = _read_reports(out)
    assert graded["base"]["tests"] == base_alone
    assert graded["buggy_masks_fill_zero"]["row"]["status"] == "graded"
