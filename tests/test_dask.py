"""Grading on a Dask cluster (`--dask`): the same scores as on one machine, through a LocalCluster,
a real scheduler and workers started as separate processes on 127.0.0.1 (plain TCP and mutual TLS
with temporary certificates), and with a worker killed in the middle of grading."""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

pytestmark = pytest.mark.slow

CORPUS = Path(__file__).parent / "corpus"
PARTS = "masks,heads,quiz"
SECRET = "dask-test"


def _class(folder: Path, n_base: int = 3) -> Path:
    """base.py several times (the first with "a" for every quiz question), one mistake, one stub submission."""
    from autograder.graders.quiz_key import ANSWERS

    folder.mkdir(parents=True, exist_ok=True)
    base = (CORPUS / "base.py").read_text()
    for i in range(n_base):
        (folder / f"base{i}.py").write_text(base + "".join(f'\nanswer_{q} = "a"' for q in ANSWERS if i == 0))
    (folder / "fill_zero.py").write_text(base + "\n\n" + (CORPUS / "buggy" / "masks_fill_zero.py").read_text())
    (folder / "kqv.py").write_text(base + "\n\n" + (CORPUS / "buggy" / "heads_qkv_order_kqv.py").read_text())
    return folder


def _grade(subs: Path, out: Path, *extra: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "grade", *sorted(map(str, subs.glob("*.py"))),
                           "--out", str(out), "--parts", PARTS, "--quiet", *extra],
                          env={**os.environ, "AUTOGRADER_SECRET": SECRET}, capture_output=True, text=True,
                          timeout=timeout)


def _scores(out: Path) -> dict[str, dict[str, float]]:
    return {p.parent.name: {t["name"]: t["score"] for t in json.loads(p.read_text())["tests"]}
            for p in out.glob("*/results.json")}


@pytest.fixture(scope="module")
def subs(tmp_path_factory) -> Path:
    return _class(tmp_path_factory.mktemp("dask") / "subs")


@pytest.fixture(scope="module")
def one_machine_out(subs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("one-machine")
    run = _grade(subs, out, "--jobs", "1")
    assert run.returncode == 0, run.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def on_one_machine(one_machine_out) -> dict:
    return _scores(one_machine_out)


def test_a_local_cluster_gives_the_scores_of_one_machine(subs, on_one_machine, one_machine_out, tmp_path):
    run = _grade(subs, tmp_path / "out", "--dask", "local:2")
    assert run.returncode == 0, run.stderr[-3000:]
    assert _scores(tmp_path / "out") == on_one_machine
    assert (tmp_path / "out" / "grades.csv").is_file()
    for table in ("items.csv", "quiz_options.csv"):  # the quiz's answers come back from Dask's workers too
        assert (tmp_path / "out" / table).read_text() == (one_machine_out / table).read_text()
    with open(tmp_path / "out" / "quiz_options.csv", newline="") as fh:
        chosen = [(row["option"], int(row["chosen"])) for row in csv.DictReader(fh)]
    assert chosen and {option for option, n in chosen if n} == {"a"} and all(n == 1 for o, n in chosen if o == "a")


class Cluster:
    """A dask scheduler and workers as separate processes on 127.0.0.1."""

    def __init__(self, folder: Path, workers: int, tls: list[str] | None = None):
        self.folder, self.tls = folder, tls or []
        self.file = folder / "scheduler.json"
        dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
        protocol = ["--protocol", "tls"] if self.tls else []
        self.scheduler = subprocess.Popen([*dask, "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                           "--scheduler-file", str(self.file), *protocol, *self.tls],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self._wait_for(lambda: self.file.is_file())
        self.workers = [self._worker() for _ in range(workers)]
        self._wait_for(lambda: self._worker_count() >= workers)

    @property
    def address(self) -> str:
        return json.loads(self.file.read_text())["address"]

    def _worker(self) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                 str(self.file), "--nthreads", "1", "--no-nanny", "--no-dashboard", *self.tls],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def _worker_count(self) -> int:
        from distributed import Client
        from distributed.security import Security

        security = Security(tls_ca_file=self.tls[1], tls_client_cert=self.tls[3], tls_client_key=self.tls[5],
                            require_encryption=True) if self.tls else None
        with Client(scheduler_file=str(self.file), security=security, timeout=30) as client:
            return len(client.scheduler_info()["workers"])

    @staticmethod
    def _wait_for(condition, seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while not condition():
            assert time.monotonic() < deadline, "the Dask cluster did not start"
            time.sleep(0.2)

    def close(self) -> None:
        for process in (*self.workers, self.scheduler):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)  # each in a session of its own: its grading worker too
            process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A scheduler and two workers over plain TCP; the last test kills one of them."""
    started = Cluster(tmp_path_factory.mktemp("cluster"), workers=2)
    yield started
    started.close()


def test_a_real_scheduler_and_workers_over_tcp(subs, on_one_machine, cluster, tmp_path):
    run = _grade(subs, tmp_path / "out", "--dask", cluster.address)
    assert run.returncode == 0, run.stderr[-3000:]
    assert _scores(tmp_path / "out") == on_one_machine


def test_a_worker_killed_while_grading_costs_no_submission(subs, on_one_machine, cluster, tmp_path):
    """Both workers get submissions (found through the scheduler file this time); one is killed as
    soon as the first report is written. Dask moves its work to the other, and every submission is
    graded as on one machine."""
    out = tmp_path / "out"
    grading = subprocess.Popen([sys.executable, "-m", "autograder", "grade", *sorted(map(str, subs.glob("*.py"))),
                                "--out", str(out), "--parts", PARTS, "--quiet", "--dask", str(cluster.file)],
                               env={**os.environ, "AUTOGRADER_SECRET": SECRET}, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    Cluster._wait_for(lambda: any(out.glob("*/results.json")) or grading.poll() is not None, seconds=300)
    os.killpg(cluster.workers[0].pid, signal.SIGKILL)
    stdout, stderr = grading.communicate(timeout=600)
    assert grading.returncode == 0, stderr[-3000:]
    assert _scores(out) == on_one_machine


def _certificates(folder: Path) -> list[str]:
    """A CA and one certificate it signed, for scheduler, workers and client alike (mutual TLS)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make temporary certificates")
    run = lambda *args: subprocess.run([openssl, *args], cwd=folder, check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca", "-keyout", "ca.key",
        "-out", "ca.pem")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "node.key", "-out", "node.csr")
    (folder / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "node.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1",
        "-extfile", "ext.cnf", "-out", "node.pem")
    return ["--tls-ca-file", str(folder / "ca.pem"), "--tls-cert", str(folder / "node.pem"),
            "--tls-key", str(folder / "node.key")]


def test_mutual_tls_with_temporary_certificates(subs, on_one_machine, tmp_path):
    tls = _certificates(tmp_path)
    cluster = Cluster(tmp_path, workers=1, tls=tls)
    try:
        assert cluster.address.startswith("tls://")
        run = _grade(subs, tmp_path / "out", "--dask", cluster.address, *tls)
        assert run.returncode == 0, run.stderr[-3000:]
        assert _scores(tmp_path / "out") == on_one_machine
        refused = _grade(subs, tmp_path / "refused", "--dask", cluster.address, timeout=120)  # no certificate
        assert refused.returncode != 0
    finally:
        cluster.close()


# adversarial cases (tests/adversarial/cases, patches of base.py) whose forged messages and student-sized
# data the cluster's workers must treat as the student's failure, as the local pool does
HOSTILE = ("forged_breach_reply", "forged_replies", "forged_callbacks", "shape_of_many_ints", "huge_parameter_shapes")


def test_forged_messages_on_a_cluster_cost_only_their_author(tmp_path):
    subs = tmp_path / "subs"
    _class(subs, n_base=1)
    base = (CORPUS / "base.py").read_text()
    for name in HOSTILE:
        (subs / f"{name}.py").write_text(base + "\n\n" + (CORPUS.parent / "adversarial" / "cases" / f"{name}.py").read_text())
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *sorted(map(str, subs.glob("*.py"))), "--out",
                          str(out), "--parts", "masks,heads,timing", "--quiet", "--dask", "local:2", "--timeout", "20"],
                         env={**os.environ, "AUTOGRADER_SECRET": SECRET}, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {row["submission"]: row for row in csv.DictReader((out / "grades.csv").open())}
    assert set(rows) >= {"base0", *HOSTILE}, sorted(rows)
    assert not [sid for sid, row in rows.items() if row["status"].startswith("grader error")], rows
    assert float(rows["base0"]["total"]) == float(rows["base0"]["max"]), rows["base0"]
    forged = {sid for sid, row in rows.items() if "forged messages" in row["tampering"]}
    assert {"forged_breach_reply", "forged_replies", "forged_callbacks"} <= forged, {s: rows[s]["tampering"] for s in rows}
