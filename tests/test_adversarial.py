"""Hostile and broken submissions, graded next to honest ones (see tests/adversarial/README.md).

For every case the grader finishes with exit status 0, the honest submissions
graded in the same run keep exactly the results they get in a run without the
hostile ones, and the hostile submission earns no point its honest code would
not. The sandbox is probed from inside (what a submission can read, write,
signal, send or leave behind for a later sandbox), and afterwards nothing it
tried may be left on the machine: no file outside its scratch folder, no
process, no key in the kernel keyring, no change to the project or to the
grader's home.

Most cases go through the command line, as a course would grade them, in one
of two runs (`RUNS`): the main one, and a later one with another secret (what a
sandbox left behind must not reach it) that also grades the timing part and the
quiz. Cases that need short limits (infinite loops, memory creep) go through
the engine with a zygote of their own (tests/adversarial/engine_run.py, the
suite's only use of the grader's internals), beside the main run.

By default the checkout is graded (the editable install of `make`); with
AUTOGRADER_TEST_INSTALL=wheel the suite grades with a normal install of a
wheel in a fresh environment, run from a folder outside the project
(tests/adversarial/installed.py).
"""

from __future__ import annotations

import csv
import ctypes
import errno
import hashlib
import json
import os
import platform
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import hosts
from adversarial import installed as installing
from adversarial.catalogue import BY_NAME, CASES, CORPUS, HERE, ROOT, SPOOF, TWINS, Case, materialize, write_twins

pytestmark = pytest.mark.slow

ALL_PARTS = ("masks", "scaling", "heads", "positions", "timing", "quiz")
PARTS = ("masks", "scaling", "heads")
ENGINE_PARTS = ("masks",)
ENGINE_LIMITS = {"call_seconds": 2.0, "cpu_seconds": 30, "memory_bytes": 2**29, "processes": 64}
SMALL_HOST_MEMORY = 2**27  # the engine cases' memory in a 768 MB container (gradescope): what the pool would give
TOKEN = str(random.randrange(10**8, 10**9))  # digits: it is also a `sleep` argument
SECRET = f"s3cr3t-{TOKEN}"
OTHER_SECRET = f"s3cr3t-{TOKEN[::-1]}"
SECRET_WORD = f"hunter2-{TOKEN}"  # in a file only root may read, which a case links to
INSTALL_MODE = os.environ.get("AUTOGRADER_TEST_INSTALL", "editable")  # "editable" (the checkout) or "wheel"
DENY_LIST_PROBES = [Path("/opt") / f"adv-{TOKEN}" / "world-readable.txt", Path("/srv") / f"adv-{TOKEN}" / "world-readable.txt"]
EMULATE = os.geteuid() == 0 and shutil.which("unshare") is not None  # a normal user, no namespaces: emulated as root
# Where the grader runs (tests/hosts.py): this machine as it is ("namespaces"), Docker's default privileges,
# an ordinary user without user namespaces, and Docker's privileges inside Gradescope's default limits.
# (tests/hosts.py's kind, its limits): a real container started by runc too, where runc is installed.
HOST_SETUPS = {"namespaces": None, "docker": ("docker", {}), "user": ("user", {}),
               "gradescope": ("docker", {"cpu": 0.5, "memory": "768M"}), "container": ("runc", {})}
HOSTS = os.environ.get("AUTOGRADER_TEST_HOSTS", ",".join(HOST_SETUPS)).split(",")


@dataclass(frozen=True)
class Run:
    """One command-line grading run of some of the cases, next to the honest twins."""

    parts: tuple[str, ...]
    secret: str = SECRET
    timeout: float = 10  # --timeout
    wall: float = 600  # a run still going after this long is stopped and counted as hung
    twins: tuple[str, ...] = tuple(TWINS)  # the honest submissions graded beside the cases


# In the order they run: "later" must follow "main", whose keyring_writer it reads from. A run that
# hangs on the old engine (a FIFO) is stopped after `wall`, and what it graded until then is kept.
RUNS = {
    "main": Run(PARTS),
    "later": Run(("masks", "positions", "timing", "quiz"), secret=OTHER_SECRET, wall=240, twins=("base",)),
}


def _parts(case: Case) -> tuple[str, ...]:
    """The parts a case is graded on: the engine's, or its run's."""
    return ENGINE_PARTS if case.runner == "engine" else RUNS[case.run].parts


HONEST_PARTS = tuple(p for p in ALL_PARTS if any(p in run.parts for run in RUNS.values()))


# ---- how the grader is run: the checkout (editable install) or a wheel in a fresh environment -------------


@dataclass
class Grader:
    """How to run the grader under test."""

    python: str
    cwd: Path  # where it runs: the checkout, or a folder outside it (as on Gradescope)
    install: Path  # the folder holding the attention_ref and autograder it grades with
    env: dict[str, str]
    engine_args: list[str] = field(default_factory=list)
    host: str = "namespaces"
    prefix: list[str] = field(default_factory=list)  # what runs the grader as on `host` (tests/hosts.py)
    uid: int = 0  # the uid it runs as there

    def engine(self, job: dict, timeout: float = 900) -> dict:
        """A job for tests/adversarial/engine_run.py, the suite's one use of the grader's internals."""
        return self.engine_result(self.engine_start(job), timeout)

    def engine_start(self, job: dict) -> subprocess.Popen:
        process = subprocess.Popen([*self.prefix, self.python, str(HERE / "engine_run.py"), *self.engine_args],
                                   stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=self.cwd,
                                   env={**self.env, "AUTOGRADER_SECRET": SECRET, "PYTHONDONTWRITEBYTECODE": "1"})
        process.stdin.write(json.dumps(job))
        process.stdin.close()
        process.stdin = None  # so that communicate() only reads
        return process

    @staticmethod
    def engine_result(process: subprocess.Popen, timeout: float = 900) -> dict:
        stdout, stderr = process.communicate(timeout=timeout)
        assert process.returncode == 0, stderr[-3000:]
        return json.loads(stdout)


@pytest.fixture(scope="session", params=HOSTS)
def grader(tmp_path_factory, request) -> Grader:
    host = request.param
    prefix, uid = [], 0
    if HOST_SETUPS[host] is not None:
        kind, limits = HOST_SETUPS[host]
        why = hosts.available(kind) or (hosts.limits_available() if limits else "")
        if why:
            pytest.skip(f"cannot emulate {host} here: {why}")
        prefix = hosts.command(kind, [], **limits)
        uid = hosts.USER_ID if kind == "user" else 0
    # A normal environment: the grader may not lean on PYTHONDONTWRITEBYTECODE to keep the project clean.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if INSTALL_MODE == "editable":
        return Grader(sys.executable, ROOT, ROOT, env, host=host, prefix=prefix, uid=uid)
    assert INSTALL_MODE == "wheel", f"AUTOGRADER_TEST_INSTALL={INSTALL_MODE!r}: editable or wheel"
    venv = installing.installed(tmp_path_factory)
    if host == "namespaces":
        elsewhere = tmp_path_factory.mktemp("elsewhere")
    else:  # a folder the grader's uid on that host can enter (pytest's folders are root's alone)
        elsewhere = Path(tempfile.mkdtemp(prefix=f"elsewhere-{host}-", dir="/tmp"))
        elsewhere.chmod(0o755)
        request.addfinalizer(lambda: shutil.rmtree(elsewhere, ignore_errors=True))
    return Grader(str(venv.python), elsewhere, venv.site,
                  {k: v for k, v in venv.env().items() if k != "PYTHONDONTWRITEBYTECODE"}, ["--installed"],
                  host=host, prefix=prefix, uid=uid)


def _start_cli(grader: Grader, paths: list[Path], out: Path, parts=PARTS, timeout: float = 10, secret: str = SECRET,
               prefix: list[str] | None = None, quiet: bool = True, env: dict[str, str] | None = None,
               extra: list[str] | None = None) -> subprocess.Popen:
    """A grading run, started."""
    env = {**grader.env, "AUTOGRADER_SECRET": secret, **(env or {})}  # the secret never on a command line
    jobs = "1" if grader.host == "gradescope" else "2"  # half a CPU: one job, as the grader itself would choose
    command = [*(prefix or grader.prefix), grader.python, "-m", "autograder", "grade", *map(str, paths), "--out", str(out),
               "--jobs", jobs, "--parts", ",".join(parts), "--timeout", str(timeout), *(["--quiet"] if quiet else []),
               *(extra or [])]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=grader.cwd, start_new_session=True)


def _finish_cli(process: subprocess.Popen, wall: float = 900) -> subprocess.CompletedProcess:
    """The run's outcome; a run still going after `wall` seconds is killed, with all it started, and gets returncode None."""
    try:
        stdout, stderr = process.communicate(timeout=wall)
        returncode = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the grader, its workers and their zygotes (the sandboxes die with these)
        stdout, stderr = process.communicate()
        returncode = None
    return subprocess.CompletedProcess(process.args, returncode, stdout, stderr)


def _grade_cli(grader: Grader, paths: list[Path], out: Path, parts=PARTS, timeout: float = 10, wall: float = 900,
               **options) -> subprocess.CompletedProcess:
    """One grading run (see `_start_cli` for the options)."""
    return _finish_cli(_start_cli(grader, paths, out, parts, timeout, **options), wall)


def _read_reports(out: Path) -> dict[str, dict]:
    """grades.csv rows and results.json checks by submission (no checks where the grader could not write them).
    A run that never finished has no grades.csv: then the rows its submissions left (row.json), if any."""
    if (out / "grades.csv").exists():
        rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    else:
        rows = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/row.json")}
    results = {sid: out / _folder_of(sid) / "results.json" for sid in rows}
    return {sid: {"row": row, "tests": json.loads(results[sid].read_text())["tests"] if results[sid].exists() else []}
            for sid, row in rows.items()}


def _reference_lines(install: Path) -> list[str]:
    """The reference's lines long enough to be unmistakable (what must never reach a sandbox or a report),
    but those a submission writes too (base.py's own, the cases')."""
    own = {line.strip() for path in [CORPUS / "base.py", *(HERE / "cases").glob("*.py")]
           for line in path.read_text().splitlines()}
    return [line.strip() for path in sorted((install / "attention_ref").glob("*.py"))
            for line in path.read_text().splitlines() if len(line.strip()) >= 40 and line.strip() not in own]


def _hashes(texts: list[str]) -> list[str]:
    return [hashlib.sha256(t.encode()).hexdigest() for t in texts]


def _folder_of(sid: str) -> str:
    """The reports folder of the id grades.csv shows (a leading apostrophe keeps a formula a text)."""
    return sid[1:] if sid[:1] == "'" and sid[1:2] in ("=", "+", "-", "@") else sid


def _digests(paths: list[Path]) -> dict[Path, str]:
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file and folder beneath `folder` (not .git) with its size and mtime: what grading must not change."""
    found = {}
    for path, folders, files in os.walk(folder):
        # not .git, nor the browser test's npm folder (installed by that test, maybe while this one runs)
        folders[:] = [f for f in folders if f not in (".git", "node_modules")]
        for name in folders + files:
            entry = os.path.join(path, name)
            try:
                st = os.lstat(entry)
            except OSError:
                continue
            found[os.path.relpath(entry, folder)] = (st.st_size, st.st_mtime_ns)
    return found


def _tree_changes(before: dict, after: dict) -> dict[str, list[str]]:
    return {"added": sorted(set(after) - set(before))[:20], "removed": sorted(set(before) - set(after))[:20],
            "changed": sorted(k for k in set(before) & set(after) if before[k] != after[k])[:20]}


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


# ---- the kernel keyring, which no namespace separates ---------------------------------------------------

_KEYCTL = {"aarch64": 219}.get(platform.machine(), 250)
_KEYCTL_REVOKE, _KEYCTL_INVALIDATE = 3, 21


def _keys() -> list[tuple[int, str]]:
    """(serial, description) of the keys the cases stored (their descriptions carry the token) that this process can see."""
    try:
        lines = Path("/proc/keys").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split(None, 8)
        if len(fields) == 9 and f"adv-keyring-{TOKEN}" in fields[8]:
            found.append((int(fields[0], 16), fields[8].split(":")[0]))
    return found


def _remove_keys() -> list[str]:
    """Invalidates the cases' keys (they are open to every uid); returns any it could not."""
    libc = ctypes.CDLL(None, use_errno=True)
    left = []
    for serial, description in _keys():
        for op in (_KEYCTL_INVALIDATE, _KEYCTL_REVOKE):
            if libc.syscall(ctypes.c_long(_KEYCTL), ctypes.c_long(op), ctypes.c_long(serial)) == 0:
                break
        else:
            left.append(description)
    return left


# ---- the runs -----------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def weaknesses(grader) -> list[str]:
    """What this host's sandbox cannot do that would let a hostile case harm the machine (nothing: a
    missing CPU share per sandbox, where cgroups are read-only, harms no one but the slowed submission)."""
    return [w for w in grader.engine({"op": "weaknesses"})["weaknesses"] if not w.startswith("no CPU share")]


@pytest.fixture(scope="session")
def runs(tmp_path_factory, grader, weaknesses, request) -> dict:
    """The honest submissions alone; then the main run, with the engine cases and the emulated environments
    (a normal user, no namespaces) beside it; then the later run. Keys, and the files put in /opt and /srv,
    are removed when the session ends."""
    if weaknesses:  # these cases write into the project, kill processes and fork hundreds of times
        pytest.skip(f"a weaker sandbox here would let hostile cases harm this machine: {'; '.join(weaknesses)}")
    if grader.host == "namespaces":
        work = tmp_path_factory.mktemp("adversarial")
    else:  # somewhere the grader's uid on that host can reach (pytest's folders are root's alone)
        work = Path(tempfile.mkdtemp(prefix=f"adversarial-{grader.host}-", dir="/tmp"))
        work.chmod(0o755)
        request.addfinalizer(lambda: shutil.rmtree(work, ignore_errors=True))
    home, tmpdir = work / "home", work / "tmp"
    for folder in (home / ".config", home / ".ssh", tmpdir):
        folder.mkdir(parents=True)
        _for_grader(grader, work, folder)
    (home / ".bashrc").write_text("# the grader's home: grading must leave it as it is\n")
    (home / ".ssh" / "id_ed25519").write_text("not a real key\n")
    secret_file = work / "secret" / "course-secret.txt"
    secret_file.parent.mkdir()
    secret_file.write_text(f"the course secret is {SECRET_WORD}\n")
    secret_file.chmod(0o600)
    request.addfinalizer(_remove_keys)
    made = []
    for probe in DENY_LIST_PROBES:  # world-readable, in folders a deny-list does not name
        try:
            probe.parent.mkdir(mode=0o755)
            probe.write_text(f"world-readable {TOKEN}\n")
            probe.chmod(0o644)
            made.append(probe)
        except OSError:
            pass
    request.addfinalizer(lambda: [shutil.rmtree(p.parent, ignore_errors=True) for p in made])

    env = {"HOME": str(home), "TMPDIR": str(tmpdir)}
    base_placeholders = {"ROOT": str(ROOT), "HOME": str(home), "TOKEN": TOKEN, "INSTALL": str(grader.install),
                         "SECRETFILE": str(secret_file), "CALL_SECONDS": f"{ENGINE_LIMITS['call_seconds']:g}",
                         "REFERENCE_HASHES": json.dumps(sorted(_hashes(_reference_lines(grader.install)))),
                         "ROSTER_HASHES": "[]"}
    watched = {"project": ROOT, "home": home} | ({"installed": grader.install, "working folder": grader.cwd}
                                                  if grader.install != ROOT else {})
    # Python caches the modules a command imports as it starts, as for any program: that is not grading.
    warm = subprocess.run([*grader.prefix, grader.python, "-m", "autograder", "grade", "--help"], capture_output=True, text=True,
                          cwd=grader.cwd, env={**grader.env, **env}, timeout=300)
    assert warm.returncode == 0, warm.stderr[-3000:]
    trees = {name: _tree(folder) for name, folder in watched.items()}
    protected_files = [ROOT / "autograder" / "graders" / "test_masks.py", ROOT / "attention_ref" / "masks.py",
                       grader.install / "autograder" / "graders" / "test_masks.py", grader.install / "attention_ref" / "masks.py"]

    honest, honest_out = work / "honest", work / "honest_out"
    honest.mkdir()
    _for_grader(grader, work, work)
    start = time.perf_counter()
    honest_run = _grade_cli(grader, write_twins(honest), honest_out, HONEST_PARTS, env=env)
    assert honest_run.returncode == 0, honest_run.stderr[-3000:]
    honest_seconds = time.perf_counter() - start

    # The engine cases run beside the main run (neither grades the timing part); the later run, whose
    # timing studies must have the machine to themselves and cpu_hog, once both are done.
    engine_subs = work / "engine_subs"
    engine_subs.mkdir()
    _for_grader(grader, work, engine_subs)
    engine_paths = []
    for case in (c for c in CASES if c.runner == "engine"):
        engine_paths += [materialize(case, engine_subs, {**base_placeholders, "SUBS": str(engine_subs), "OUT": ""}),
                         engine_subs / "base.py"]  # base right after each: a crash must not carry over
    write_twins(engine_subs)
    engine_start = time.perf_counter()
    limits = {**ENGINE_LIMITS, **({"memory_bytes": SMALL_HOST_MEMORY} if grader.host == "gradescope" else {})}
    engine_job = grader.engine_start({"op": "grade", "paths": [str(p) for p in engine_paths], "parts": ENGINE_PARTS,
                                      "secret": SECRET, "limits": limits})

    variants = _start_variants(grader, work / "variants") if EMULATE and grader.host == "namespaces" else {}

    cli, graded, seconds, outs = {}, {}, {"honest": honest_seconds}, {}
    for run_name, run in RUNS.items():
        subs, out = work / run_name / "subs", work / run_name / "out"
        subs.mkdir(parents=True)
        _for_grader(grader, work, subs)
        placeholders = {**base_placeholders, "SUBS": str(subs), "OUT": str(out),
                        "ROSTER_HASHES": json.dumps(sorted(_hashes([str(out), str(subs), *(str(subs / f"{twin}.py")
                                                                                            for twin in run.twins)])))}
        first, rest = [], []
        for case in (c for c in CASES if c.runner == "cli" and c.run == run_name):
            (first if case.order == "first" else rest).append(materialize(case, subs, placeholders))
            if case.earns == "as twin":  # the same code without its cheats, graded in the same run
                honest_case = Case(f"{case.name}__twin", case.why, "",
                                   patch=re.sub(r"^.*# cheat$\n?", "", case.patch, flags=re.M))
                rest.append(materialize(honest_case, subs, placeholders))
        if run_name == "main":
            protected_files.append(subs / "buggy_masks_fill_zero.py")
        paths = first + write_twins(subs, run.twins) + sorted(rest)
        start = time.perf_counter()
        cli[run_name] = _grade_cli(grader, paths, out, run.parts, run.timeout, run.wall, secret=run.secret, env=env,
                                   quiet=run_name != "main")  # the main run prints its class table
        seconds[run_name] = time.perf_counter() - start
        graded[run_name], outs[run_name] = _read_reports(out), out
        if engine_job is not None:
            engine, engine_job = grader.engine_result(engine_job), None
            seconds["engine (beside main)"] = time.perf_counter() - engine_start
            variants = {name: (_finish_cli(process), out) for name, (process, out) in variants.items()}
    protected = _digests([p for p in protected_files if p.exists()])
    (work / "seconds.json").write_text(json.dumps({  # for a person reading the test's folder afterwards
        "runs": seconds, "engine cases": {r["id"]: round(r["seconds"], 1) for r in engine["results"] if r["id"] != "base"},
        "returncodes": {name: run.returncode for name, run in cli.items()}}, indent=1))

    return {
        "work": work, "outs": outs, "honest": _read_reports(honest_out), "cli": cli, "seconds": seconds,
        "graded": graded, "engine": engine, "protected": protected, "strays": _marked_processes(),
        "markers": _marker_files([Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), ROOT, ROOT / "autograder", Path.home(),
                                  grader.install, grader.install / "autograder"], [work]),
        "trees": {name: (trees[name], _tree(folder)) for name, folder in watched.items()},
        "tmpdir left": sorted(p.name for p in tmpdir.iterdir()), "keys": _keys(), "deny-list probes": made,
        "secret file": secret_file, "variants": variants,
    }


def _for_grader(grader: Grader, work: Path, folder: Path) -> None:
    """`folder`, and those between it and `work`, the grader's own on its host (to write its reports in)."""
    if grader.uid:
        for path in (folder, *[p for p in folder.parents if work in p.parents or p == work]):
            os.chown(path, grader.uid, grader.uid)


def _start_variants(grader: Grader, folder: Path) -> dict[str, tuple[subprocess.Popen, Path]]:
    """Grading as a normal user (uid 1000 in a user namespace of its own), as root of a container that allows
    no new namespaces (Landlock confines the sandboxes), and where neither namespaces nor Landlock can be had
    (refused, then allowed with --allow-weak-sandbox): small classes, part masks, started to run beside the
    main run. Returns each run's process and --out folder."""
    started = {}
    normal_user = folder / "normal user"
    paths = _small_class(normal_user, ["read_secrets", "kill_everything"], {
        "ROOT": str(ROOT), "OUT": str(normal_user / "out"), "SUBS": str(normal_user / "subs"), "TOKEN": TOKEN,
        "HOME": str(Path.home()), "INSTALL": str(grader.install)})
    started["normal user"] = (_start_cli(grader, paths, normal_user / "out", parts=("masks",),
                                         prefix=["unshare", "--user", "--map-user=1000", "--map-group=1000"]),
                              normal_user / "out")
    paths = _small_class(folder / "no namespaces", ["read_secrets"], {
        "ROOT": str(ROOT), "OUT": str(folder / "no namespaces" / "out"), "SUBS": str(folder / "no namespaces" / "subs"),
        "TOKEN": TOKEN, "HOME": str(Path.home()), "INSTALL": str(grader.install)})
    forbid = "; ".join(f"echo 0 > /proc/sys/user/max_{kind}_namespaces" for kind in ("pid", "mnt", "net", "ipc", "user"))
    prefix = ["unshare", "--user", "--map-root-user", "sh", "-c", f'{forbid}; exec "$@"', "sh"]
    started["no namespaces"] = (_start_cli(grader, paths, folder / "no namespaces" / "out", parts=("masks",),
                                           prefix=prefix, quiet=False), folder / "no namespaces" / "out")
    if not hosts.available("nolandlock"):
        paths = _small_class(folder / "neither", [], {})
        for name, extra in (("neither", []), ("neither, allowed", ["--allow-weak-sandbox"])):
            out = folder / name.replace(",", "") / "out"
            started[name] = (_start_cli(grader, paths, out, parts=("masks",), prefix=hosts.command("nolandlock", []),
                                        extra=extra, quiet=False), out)
    return started


def _small_class(folder: Path, names: list[str], placeholders: dict[str, str]) -> list[Path]:
    subs = folder / "subs"
    subs.mkdir(parents=True)
    return write_twins(subs) + [materialize(BY_NAME[name], subs, placeholders) for name in names]


def _results(runs: dict, name: str) -> list[dict]:
    """The checks of submission `name` (for the engine, the first time it was graded)."""
    case = BY_NAME[name]
    if case.runner == "engine":
        return next(r["tests"] for r in runs["engine"]["results"] if r["id"] == name)
    return runs["graded"][case.run][case.sid]["tests"]


def _row(runs: dict, name: str) -> dict:
    return runs["graded"][BY_NAME[name].run][BY_NAME[name].sid]["row"]


def _subject(check_name: str) -> set[str]:
    """The functions a check is about: the words before its colon."""
    return set(re.findall(r"\w+", check_name.split("/", 1)[1].split(":")[0]))


def _probe(tests: list[dict]) -> dict:
    for test in tests:
        found = re.search(r"PROBE (\{.*?\})\s*$", test["output"], re.M)
        if found:
            return json.loads(found.group(1))
    raise AssertionError("the case did not report its probe:\n" + "\n".join(t["output"] for t in tests)[:3000])


def _honest(runs: dict, sid: str, parts: tuple[str, ...]) -> dict[str, dict]:
    """An honest submission's checks of `parts`, graded alone, by name."""
    return {t["name"]: t for t in runs["honest"][sid]["tests"] if t["name"].split("/")[0] in parts}


# ---- what every case must get ---------------------------------------------------------------------------


@pytest.mark.parametrize("run_name", list(RUNS))
def test_grader_exits_0_with_every_hostile_submission(runs, run_name):
    run = runs["cli"][run_name]
    assert run.returncode is not None, f"the {run_name} run was still going after {RUNS[run_name].wall:g} s: it hung"
    for report in ("grades.csv", "class_report.html"):
        assert (runs["outs"][run_name] / report).is_file(), f"no {report}:\n{run.stderr[-3000:]}"
    graded = runs["graded"][run_name]
    twins = {f"{c.name}__twin" for c in CASES if c.earns == "as twin" and c.run == run_name}
    assert set(graded) == {*RUNS[run_name].twins, *twins, *(c.sid for c in CASES if c.runner == "cli" and c.run == run_name)}, \
        run.stderr[-3000:]
    statuses = {sid: entry["row"]["status"] for sid, entry in graded.items()}
    errors = {sid for sid, status in statuses.items() if status.startswith("grader error")}
    known = {c.name for c in CASES if c.known_issue}
    assert errors <= known, {sid: statuses[sid] for sid in errors - known}
    if not errors:
        assert run.returncode == 0, run.stderr[-3000:]


@pytest.mark.parametrize("run_name", list(RUNS))
def test_honest_submissions_keep_exactly_their_results(runs, run_name):
    """Beside every hostile case, base.py and a buggy variant get what they get alone: a CPU hog, a keyring
    or a hang costs them nothing. Under another secret their inputs differ, so only their scores are compared."""
    parts = RUNS[run_name].parts
    for sid in RUNS[run_name].twins:
        alone, among = _honest(runs, sid, parts), runs["graded"][run_name][sid]
        got = {t["name"]: t for t in among["tests"]}
        if RUNS[run_name].secret == SECRET:
            assert got == alone, {n: (got.get(n), alone.get(n)) for n in set(got) | set(alone) if got.get(n) != alone.get(n)}
        else:
            assert {n: t["score"] for n, t in got.items()} == {n: t["score"] for n, t in alone.items()}, sid
        columns = [*parts, "status"]
        assert {c: among["row"][c] for c in columns} == {c: runs["honest"][sid]["row"][c] for c in columns}, sid


@pytest.mark.parametrize("name", [pytest.param(c.name, marks=pytest.mark.xfail(reason=c.known_issue, strict=True))
                                  if c.known_issue else c.name for c in CASES])
def test_case_earns_nothing_unearned(runs, name):
    case = BY_NAME[name]
    if case.runner == "cli":
        assert case.sid in runs["graded"][case.run], f"{name} was never graded as {case.sid} (did its run hang?)"
        assert not _row(runs, name)["status"].startswith("grader error"), _row(runs, name)
    tests = _results(runs, name)
    base = {n: t["score"] for n, t in _honest(runs, "base", _parts(case)).items()}
    got = {t["name"]: t["score"] for t in tests}
    assert set(got) == set(base), "not the same checks as base.py"
    internal = [t["output"] for t in tests if "Internal grader error" in t["output"] or t.get("internal")]
    assert not internal, internal
    kind, _, arg = case.earns.partition(" ")
    if kind == "base":
        assert got == base, {n: s for n, s in got.items() if s != base[n]}
    elif kind == "nothing":
        assert not any(got.values()), {n: s for n, s in got.items() if s}
    elif kind == "at-most":
        assert arg == "base", case.earns
        assert all(score <= base[check] for check, score in got.items()), {n: (s, base[n]) for n, s in got.items() if s > base[n]}
    elif kind == "zero-on":
        functions = {f.strip() for f in arg.split(",")}
        for check, score in got.items():
            want = 0 if _subject(check) & functions else base[check]
            assert score == want, f"{check}: {score}, expected {want}\n" + next(t["output"] for t in tests if t["name"] == check)
        assert any(_subject(check) & functions for check in got), f"no check is about {functions}"
    elif kind == "as":
        twin_tests = runs["graded"][case.run][f"{name}__twin"] if arg == "twin" else runs["honest"][arg.replace("/", "_")]
        twin = {t["name"]: t["score"] for t in twin_tests["tests"]}
        assert all(score <= twin[check] for check, score in got.items()), {n: (s, twin[n]) for n, s in got.items() if s > twin[n]}
    else:
        assert kind == "any", case.earns
    if case.feedback:
        failed = "\n".join(t["output"] for t in tests if t["status"] == "failed")
        assert case.feedback in failed, f"{case.feedback!r} not in:\n{failed[:3000]}"
    if case.problem:
        notes = _row(runs, name)["status"]
        assert case.problem in notes, f"{case.problem!r} not in the problem notes: {notes[:1000]!r}"


def test_every_case_is_graded_quickly_enough(runs):
    """A looping case costs about one time limit, not one per call (nor two, with a reload under a limit of its
    own), counted as a busy machine cannot change it: the time limits of its calls that were stopped for running
    past them, and the CPU time its calls caused by the kernel's count, on at most every core (a run that hangs
    fails test_grader_exits_0_with_every_hostile_submission)."""
    graded = {r["id"]: r for r in runs["engine"]["results"]}
    assert graded["huge_expanded_tensor_timed"]["cpu"] < 20, "an expand() was materialised"
    for name in ("infinite_loop_at_import", "infinite_loop_in_function", "sigterm_ignored_loop", "trickle_reply"):
        assert graded[name]["stopped"] > 0, f"{name} was never stopped at a time limit"
    limit, cores = ENGINE_LIMITS["call_seconds"], os.cpu_count() or 1
    costly = {c.name: f"stopped after {graded[c.name]['stopped']:g} s of time limits and {graded[c.name]['cpu']:.1f} s "
                      f"of CPU time, over {c.within:g} time limits of {limit:g} s"
              for c in CASES if c.within and (graded[c.name]["stopped"] > c.within * limit
                                               or graded[c.name]["cpu"] > c.within * limit * cores)}
    assert not costly, costly
    # what its own threads kept its main thread waiting is never given back (issue 44): only about what a busy
    # machine gave a case that loops alone
    busy = {r["id"]: r.get("busy", 0.0) for r in runs["engine"]["results"]}
    alone = max(busy["infinite_loop_in_function"], busy["infinite_loop_at_import"])
    assert busy["threads_keep_cpu_busy"] <= alone + 1.0, f"given {busy['threads_keep_cpu_busy']:.1f} s"


def test_a_crash_never_reaches_the_next_submission(runs):
    full = {t["name"]: t["score"] for t in runs["honest"]["base"]["tests"] if t["name"].startswith("masks/")}
    bases = [r for r in runs["engine"]["results"] if r["id"] == "base"]
    assert len(bases) == sum(c.runner == "engine" for c in CASES)
    for graded in bases:
        assert {t["name"]: t["score"] for t in graded["tests"]} == full


# ---- what a sandbox can reach -------------------------------------------------------------------------


def test_sandbox_hides_the_graders_the_answers_and_the_secret(runs):
    found = _probe(_results(runs, "read_secrets"))
    leaks = {k: v for k, v in found.items() if isinstance(v, str) and not v.startswith("no")}
    assert not leaks, leaks
    assert found["secret"] == [], found["secret"]
    assert found["memory scanned MB"] > 0
    # its own PID namespace (pid 1 its loaded code, the part's process forked from it), or no /proc (Landlock)
    assert set(found["visible pids"]) <= {1, 2}, found["visible pids"]
    assert set(found["home listing"]) <= _python_in_home(), found["home listing"]
    everything = "\n".join(p.read_text(errors="replace") for out in runs["outs"].values() for p in out.rglob("*") if p.is_file())
    assert SECRET not in everything and OTHER_SECRET not in everything


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


def test_the_file_system_view_is_an_allow_list(runs):
    """/proc/self/mountinfo names no hidden folder (the class roster, the reports, the project), and a
    world-readable file in a folder nobody thought to hide (/opt, /srv) stays out of reach."""
    found = _probe(_results(runs, "probe_filesystem_view"))
    assert found["secret mount points"] == [], found["secret mount points"]
    for label, probe in (("opt", DENY_LIST_PROBES[0]), ("srv", DENY_LIST_PROBES[1])):
        if probe in runs["deny-list probes"]:
            assert found[label].startswith("no"), (str(probe), found[label])


def test_no_channel_between_sandboxes_through_the_kernel_keyring(runs):
    """add_key, keyctl and request_key are refused (EPERM), nothing is stored, and no key outlives grading:
    keyring_reader, graded later under another secret, finds nothing (its score: `earns: nothing`)."""
    found = _probe(_results(runs, "keyring_writer"))
    calls = {name: found.get(name) for name in ("add_key", "keyctl", "request_key")}
    assert all(call and call[0] == -1 and call[1] == errno.EPERM for call in calls.values()), calls
    assert found["stored"] == [], found
    assert runs["keys"] == [], f"keys left in the kernel keyring after grading: {runs['keys']}"


def test_links_and_special_files_are_never_followed(runs):
    """What a symbolic link in a submission points to never reaches any report: not a file only root may
    read, not /etc/shadow, not the reference."""
    reports = [p for out in runs["outs"].values() for p in out.rglob("*") if p.is_file()]
    text = "\n".join(p.read_text(errors="replace") for p in reports)
    assert SECRET_WORD not in text
    try:
        shadow = [line for line in Path("/etc/shadow").read_text().splitlines() if len(line) >= 8]
    except OSError:
        shadow = []
    assert not [line for line in shadow if line in text], "lines of /etc/shadow are in the reports"
    masks_source = (ROOT / "attention_ref" / "masks.py").read_text()
    assert not [line for line in masks_source.splitlines() if len(line) > 40 and line in text and "def " in line]


def test_the_class_table_cannot_be_spoofed(runs):
    """The table printed on the terminal escapes control characters: no escape sequence, no forged row."""
    table = runs["cli"]["main"].stdout
    assert "nb_table_spoof" in table, table[-3000:]
    assert "\x1b" not in table, "an escape sequence reaches the terminal"
    assert not [line for line in table.splitlines() if line.lstrip("\r").startswith(SPOOF)], "a forged row"


def test_one_student_cannot_slow_another_down(runs):
    """cpu_hog's 40 busy processes ran beside the honest submissions' timing studies (--jobs 2): each sandbox
    gets its share of the CPU, and no more, so their real T² studies still pass."""
    for sid in RUNS["later"].twins:
        real = [t for t in runs["graded"]["later"][sid]["tests"] if "real study" in t["name"]]
        assert real and all(t["status"] == "passed" for t in real), real


# ---- what grading leaves behind ------------------------------------------------------------------------


def test_nothing_is_left_outside_the_scratch_folder(runs):
    assert runs["markers"] == [], runs["markers"]
    assert _digests(list(runs["protected"])) == runs["protected"]
    for out in runs["outs"].values():
        assert not list(out.rglob(".*.tmp*")), "a report was left half written"
        for results in out.glob("*/results.json"):
            json.loads(results.read_text())  # whole, never half written
            assert results.stat().st_size < 500_000, f"{results} is bloated"


def test_grading_changes_nothing_in_the_project_or_the_home(runs):
    """Grading a hostile class writes only into --out (and the sandboxes' private scratch): the project tree
    (with its .venv), the installed package, the folder the grader runs in and the grader's home keep every
    file, size and mtime, no __pycache__ appears (the graders' included, which pytest would cache rewritten),
    and the grader's TMPDIR is left empty. Only what `python -m autograder grade --help` caches as it starts
    may be there already."""
    changes = {name: _tree_changes(before, after) for name, (before, after) in runs["trees"].items()}
    assert not {name: c for name, c in changes.items() if any(c.values())}, changes
    assert runs["tmpdir left"] == [], runs["tmpdir left"]


def test_no_process_outlives_grading(runs):
    assert runs["strays"] == [], runs["strays"]


def test_forks_stay_within_the_process_limit(runs):
    forked = _probe(_results(runs, "fork_storm_over_limit"))["forked"]
    assert 0 < forked < ENGINE_LIMITS["processes"]


def test_a_reference_part_cannot_be_smuggled_between_parts(runs):
    heads = [t for t in _results(runs, "smuggle_reference") if t["name"].startswith("heads/")]
    assert heads and not any(t["score"] for t in heads)
    assert "not implemented" in heads[0]["output"]


def test_no_sandbox_holds_reference_code(runs, grader):
    """The other parts' names are served by the grader: a sandbox that searches itself (the frames above its
    code, every object, linecache, its modules) finds no line of the reference, no function whose code is
    not its own, and no module of the reference, the graders or pytest (its zygote was forked from the
    workers' parent before that imported them); and no report of any run holds a line of the reference."""
    found = _probe(_results(runs, "hunt_reference_code"))
    assert found["reference lines at load"] == 0 and found["reference lines"] == 0, found["sample"]
    assert found["functions not its own"] == [], found["functions not its own"]
    assert found["grader modules"] == [], found["grader modules"]
    lines = set(_reference_lines(grader.install))
    for out in runs["outs"].values():
        for report in out.rglob("*"):
            if report.is_file():
                leaked = [line for line in lines if line in report.read_text(errors="replace")]
                assert not leaked, f"{report}: {leaked[:5]}"


def test_a_sandbox_can_signal_nothing_outside_itself(runs):
    """Not the grader, not another sandbox, not the machine: its own PID namespace, or Landlock's scope."""
    assert _probe(_results(runs, "signal_probe"))["signalable outside"] == []


def test_no_sandbox_holds_the_class_roster(runs):
    """What the zygote is told (and every sandbox inherits) names no classmate, no reports folder."""
    assert _probe(_results(runs, "hunt_roster"))["roster paths"] == []


def test_ids_are_data(runs):
    """Odd file names get ids that stay one folder inside --out, stay readable, never clash with the run's
    own files and are no formula in grades.csv; nothing is written beside --out."""
    out = runs["outs"]["main"]
    for case in (c for c in CASES if c.file_name):
        assert (out / _folder_of(case.sid) / "results.json").is_file(), case.sid
    assert (out / "grades.csv").is_file() and (out / "class_report.html").is_file()
    assert sorted(p.name for p in out.parent.iterdir()) == ["out", "subs"], "something was written beside --out"
    rows = (out / "grades.csv").read_text(encoding="utf-8").splitlines()
    assert not [r for r in rows if r[:1] in ("=", "+", "-", "@")], "a formula in grades.csv"


def test_the_class_report_shows_only_what_the_graders_decided(runs):
    """An exception message that reads like a diagnosis and a timeout is shown to its student, never counted."""
    page = (runs["outs"]["main"] / "class_report.html").read_text()
    page = re.sub(r"<pre>.*?</pre>", "", page, flags=re.S)  # but the students' code, shown as code beside a look-alike's
    assert f"forged diagnosis {TOKEN}" not in page
    incidents = re.findall(r"<tr class='incident'[^>]*data-student='([^']*)'", page)
    assert "forged_diagnosis" not in incidents, incidents


# case -> the kinds of tampering the grader must count for it: from its code, or from what its process sent
TAMPERING = {"monkeypatch_comparisons": {"patches"}, "fake_all_passed": {"fake results"},
             "write_outside_scratch": {"writes"}, "fork_storm": {"processes"}, "read_secrets": {"imports"},
             "smuggle_reference": {"hidden code"}, "forged_replies": {"forged messages"},
             "forged_callbacks": {"forged messages"}, "forged_breach_reply": {"forged messages"}}


def test_each_kind_of_tampering_is_counted_and_honest_work_counts_none(runs):
    """grades.csv's tampering column and the class report's section, from what the grader saw itself."""
    for name, kinds in TAMPERING.items():
        cell = _row(runs, name)["tampering"]
        counted = {entry.rsplit(" ", 1)[0] for entry in cell.split("; ") if entry}
        assert kinds <= counted, (name, cell)
        page = (runs["outs"][BY_NAME[name].run] / "class_report.html").read_text()
        assert f"<tr class='tampering' data-student='{BY_NAME[name].sid}'" in page, name
    for run_name, run in RUNS.items():
        for sid in run.twins:
            assert runs["graded"][run_name][sid]["row"]["tampering"] == "", (run_name, sid)


def test_no_constant_passes_a_check_of_measured_or_sampled_values(runs):
    """A timer that calls fn as often as it should but returns a fixed 5 ms, and a spread returned without
    drawing, fail the checks of what they return."""
    timing = {t["name"].split(": ", 1)[1]: t["score"] for t in _results(runs, "timing_constant_seconds")
              if t["name"].startswith("timing/time_call")}
    assert timing["calls fn warmup + repeats times"] > 0
    assert {n: s for n, s in timing.items() if n != "calls fn warmup + repeats times" and s}  == {}, timing
    spread = [t for t in _results(runs, "spread_without_sampling") if "dot_product_spread" in t["name"]]
    assert spread and not any(t["score"] for t in spread if "about" in t["name"]), spread


def test_notebook_problems_are_reported(runs):
    problems = {sid: runs["graded"]["main"][sid]["row"]["status"]
                for sid in ("nb_corrupt_json", "nb_deleted_and_duplicated_cells")}
    assert "nb_corrupt_json.ipynb could not be read: not valid notebook JSON" in problems["nb_corrupt_json"]
    assert "masks-causal_mask is missing: no cell defines `causal_mask`" in problems["nb_deleted_and_duplicated_cells"]
    assert ("answer cell masks-causal_average appears in 2 cells" in problems["nb_deleted_and_duplicated_cells"]
            and "the last definition is graded, as after Restart & Run All" in problems["nb_deleted_and_duplicated_cells"])


# ---- the sandbox itself ------------------------------------------------------------


FACTS = """
import ctypes, os, socket, subprocess
def _status():
    try:
        return dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
    except OSError:  # Landlock's view: a forked part's own /proc entry is not in it
        libc = ctypes.CDLL(None, use_errno=True)
        header, data = (ctypes.c_uint32 * 2)(0x20080522, 0), (ctypes.c_uint32 * 6)()
        libc.capget(ctypes.byref(header), ctypes.byref(data))
        return {"CapEff": f"{data[3]:08x}{data[0]:08x}", "NoNewPrivs": str(libc.prctl(39, 0, 0, 0, 0))}
def facts():
    status = _status()
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


@pytest.fixture(scope="module")
def sandbox_facts(grader) -> dict:
    """One engine job: 25 sandboxes spawned and timed, then FACTS from inside one."""
    return grader.engine({"op": "sandbox", "count": 25, "code": FACTS})


# A fresh sandbox is a fork of the zygote: under Gradescope's half a CPU, beside the whole suite, each took
# 0.03 to 0.17 s (median 0.1005 s); one that imported torch again would take over a second. The bound leaves
# room for a busy machine, and is per core of the host: on half a CPU the same work takes twice as long.
SPAWN_SECONDS_PER_CORE = 0.25


def test_spawning_a_sandbox_stays_cheap(sandbox_facts, grader):
    times = sandbox_facts["times"]
    setup = HOST_SETUPS[grader.host]
    cores = min(1.0, (setup[1] if setup else {}).get("cpu", 1.0))
    assert statistics.median(times[1:]) < SPAWN_SECONDS_PER_CORE / cores, times


def test_a_sandbox_has_no_capabilities_and_no_network(sandbox_facts, grader):
    weak = [w for w in sandbox_facts["weaknesses"] if not w.startswith("no CPU share")]
    if weak:
        pytest.skip(f"weaker sandbox here: {weak}")
    facts = sandbox_facts["facts"]
    assert facts["CapEff"] == "0000000000000000" and facts["NoNewPrivs"] == "1", facts
    # a program it runs gets no capability back (where it may read its own /proc entry: not under Landlock)
    assert "CapEff:\t0000000000000000" in facts["shell"] or "CapEff" not in facts["shell"], facts
    assert facts["network"] != "connected", facts
    # its own PID namespace: pid 1 is its loaded code, and a part runs in a process forked from that
    assert facts["pid"] in (1, 2) or grader.host != "namespaces", facts
    if grader.uid == 0 and os.geteuid() == 0:
        assert facts["uid"] not in (0, os.getuid()), facts  # a uid of its own


# ---- as a normal user, and where the system allows no namespaces (graded beside the main run) --------------

needs_root = pytest.mark.skipif(not EMULATE, reason="emulated with unshare, as root")


@pytest.fixture(scope="module")
def base_alone(runs) -> list[dict]:
    """base.py's masks checks graded on its own, as root (in the honest run): what the emulated runs must match."""
    return [t for t in runs["honest"]["base"]["tests"] if t["name"].startswith("masks/")]


@needs_root
def test_as_a_normal_user_the_sandbox_still_isolates(runs, base_alone):
    """A normal user (uid 1000 in a user namespace of its own) gets user and PID namespaces: the same protection."""
    run, out = _variants(runs)["normal user"]
    assert run.returncode == 0, run.stderr[-3000:]
    assert "weaker sandbox" not in run.stderr, run.stderr
    graded = _read_reports(out)
    assert graded["base"]["tests"] == base_alone
    found = _probe(graded["read_secrets"]["tests"])
    assert not {k: v for k, v in found.items() if isinstance(v, str) and not v.startswith("no")}, found
    assert found["secret"] == [] and set(found["visible pids"]) <= {1, 2}, found
    assert set(found["home listing"]) <= _python_in_home(), found["home listing"]
    assert all(t["score"] == t["max_score"] for t in graded["kill_everything"]["tests"])


@needs_root
def test_without_namespaces_landlock_confines_the_sandboxes(runs, base_alone):
    """Root of a container that allows no new namespaces: each sandbox confines itself with Landlock, the
    run's first lines say so, nothing leaks, and the scores are the same."""
    variants = _variants(runs)
    run, out = variants["no namespaces"]
    assert run.returncode == 0, run.stderr[-3000:]
    assert "isolation: Landlock" in run.stderr.splitlines()[0], run.stderr[:1000]
    graded = _read_reports(out)
    assert graded["base"]["tests"] == base_alone
    found = _probe(graded["read_secrets"]["tests"])
    assert not {k: v for k, v in found.items() if isinstance(v, str) and not v.startswith("no")}, found
    assert found["secret"] == [], found


@needs_root
def test_without_namespaces_or_landlock_grading_is_refused_unless_allowed(runs, base_alone):
    """Where a sandbox could read the reference and the graders (no namespaces, no Landlock): grading is
    refused (exit status 3, saying why) unless --allow-weak-sandbox, and then it works, says so, and gives
    the same scores."""
    variants = _variants(runs)
    if "neither" not in variants:
        pytest.skip("this machine cannot emulate a host without Landlock")
    (refused, refused_out), (allowed, out) = variants["neither"], variants["neither, allowed"]
    assert refused.returncode == 3 and "refused" in refused.stderr, (refused.returncode, refused.stderr[-3000:])
    assert not (refused_out / "base").exists(), "a submission was graded where grading was refused"
    assert allowed.returncode == 0, allowed.stderr[-3000:]
    assert "isolation: none" in allowed.stderr, allowed.stderr
    graded = _read_reports(out)
    assert graded["base"]["tests"] == base_alone
    assert graded["buggy_masks_fill_zero"]["row"]["status"] == "graded"


def _variants(runs: dict) -> dict:
    if not runs["variants"]:
        pytest.skip("the emulated variants run beside the main run of this machine's own host only")
    return runs["variants"]
