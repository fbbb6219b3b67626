"""Grading on a Dask cluster: one task per submission, a grading worker beside every Dask worker.

`--dask ADDRESS` takes a scheduler address (`tcp://host:port`, or `tls://host:port` with
certificates: `--tls-ca-file`, `--tls-cert`, `--tls-key`, or Dask's own security configuration),
a scheduler file (the JSON that `dask scheduler --scheduler-file` writes), or `local:N` for a
LocalCluster of N single-threaded worker processes on this machine.

Every Dask worker gets a `WorkerOnDask`: it starts a grading worker (pool.worker) as a fresh
process beside it (never forked from the multi-threaded Dask worker; a daemonic Dask worker may
start a subprocess but not a multiprocessing child), which starts its own zygote; both die with
the Dask worker. Student code never runs in the Dask worker itself. A task sends one submission
(plain data) to it and returns the result as plain JSON; the client writes every report. Dask
retries a task whose worker was lost; a submission that keeps killing workers ends as a grader
error, never as a score. On connect, workers must run the same torch and package versions.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Iterator, cast

from distributed import WorkerPlugin

from ..model.results import GradedSubmission
from ..model.submission import Submission
from .worker import WorkerError, WorkerFault, WorkerProcess, WorkerSettings

PLUGIN_NAME = "autograder-grading"
RETRIES = 2  # a task whose worker died is tried again on another; then it is a grader error
GPU = "GPU"  # the Dask resource name of a worker's GPU


class WorkerOnDask(WorkerPlugin):
    """A Dask worker plugin: a grading worker process beside the Dask worker, one task at a time."""

    name = PLUGIN_NAME

    def __init__(self, settings: WorkerSettings):
        self.settings = settings.to_json()  # it travels pickled to every Dask worker: as plain data, by name
        self.worker: WorkerProcess | None = None
        self.weaknesses: list[str] = []
        self.isolation = ""

    def setup(self, worker: Any) -> None:
        self.lock = threading.Lock()  # made here, on the worker: the plugin travels pickled
        self.worker = WorkerProcess.standalone(WorkerSettings.from_json(self.settings))
        self.weaknesses = self.worker.ready()
        self.isolation = self.worker.isolation

    def teardown(self, worker: Any) -> None:
        if self.worker is not None:
            self.worker.close()
            self.worker = None

    def grade(self, submission: dict, parts: list[str]) -> dict:
        with self.lock:
            if self.worker is None:
                self.worker = WorkerProcess.standalone(WorkerSettings.from_json(self.settings))
                self.weaknesses = self.worker.ready()
            try:
                return self.worker.grade(submission, tuple(parts))
            except WorkerError as exc:
                if not exc.fatal:  # it died: a fresh one for the retry
                    self.worker.close()
                    self.worker = None
                raise


def grade_task(submission: dict, parts: list[str]) -> dict:
    """Runs on a Dask worker: grade one submission with the worker's grading process."""
    from distributed import get_worker

    plugin = cast(WorkerOnDask, get_worker().plugins[PLUGIN_NAME])  # the one `DaskPool.connect` registered by name
    return plugin.grade(submission, parts)


def versions() -> dict[str, str]:
    """What must be the same on the client and every worker for the scores to be the same."""
    from importlib.metadata import version

    import torch

    found: dict[str, str] = {"torch": torch.__version__}  # a TorchVersion: a str that compares as a version
    for package in ("attention-exercises", "numpy", "pytest", "distributed"):
        found[package] = version(package)
    return found


def _weaknesses(dask_worker: Any) -> list[str]:
    return list(dask_worker.plugins[PLUGIN_NAME].weaknesses)


def _isolation(dask_worker: Any) -> str:
    return dask_worker.plugins[PLUGIN_NAME].isolation


class DaskPool:
    """The same interface as batch.LocalPool, on a Dask cluster."""

    def __init__(self, address: str, security: Any = None):
        self.address, self.security = address, security
        self.settings: WorkerSettings | None = None  # the run's (`start`)
        self.weaknesses: set[str] = set()
        self.isolation = ""
        self.ready_at: float | None = None  # when every worker had its grading process (time.monotonic)
        self.client: Any = None
        self._cluster: Any = None

    def begin(self) -> None:
        """Nothing to start before the run's settings are known: the grading plugin carries them."""

    def start(self, settings: WorkerSettings) -> None:
        """Connect (see `connect`): workers start their grading processes while the caller goes on."""
        self.settings = settings
        if self.client is None:
            self.connect()

    def warm(self, submissions: int) -> None:
        """Nothing to start ahead: each Dask worker starts its grading process when it is given the plugin."""

    def connect(self) -> None:
        """Connect, check versions, install the grading plugin on every worker."""
        import time

        from distributed import Client, LocalCluster

        if self.address.startswith("local:"):
            count = int(self.address.split(":", 1)[1])
            self._cluster = LocalCluster(n_workers=count, threads_per_worker=1, processes=True,
                                         dashboard_address=None, silence_logs=40)
            self.client = Client(self._cluster)
        elif Path(self.address).is_file():
            self.client = Client(scheduler_file=self.address, security=self.security)
        else:
            self.client = Client(self.address, security=self.security)
        differ = self.version_differences()
        if differ:
            raise WorkerError("workers run other versions than this client: " + "; ".join(differ),
                              WorkerFault.CANNOT_START)
        assert self.settings is not None, "the pool was not started (DaskPool.start)"
        self.client.register_plugin(WorkerOnDask(self.settings), name=PLUGIN_NAME)
        for found in self.client.run(_weaknesses).values():
            self.weaknesses.update(found)
        self.isolation = "; ".join(sorted(set(self.client.run(_isolation).values())))
        self.ready_at = time.monotonic()

    def version_differences(self) -> list[str]:
        here = versions()
        differ = []
        for worker, theirs in self.client.run(versions).items():
            for package, version in theirs.items():
                if version != here.get(package):
                    differ.append(f"{worker} has {package} {version}, this client {here.get(package)}")
        return differ

    def gpu_workers(self) -> bool:
        info = self.client.scheduler_info()
        return any(GPU in (w.get("resources") or {}) for w in info.get("workers", {}).values())

    def ready(self) -> str:
        """What confines each sandbox on the workers (connecting first)."""
        if self.client is None:
            self.connect()
        return self.isolation

    def grade(self, submissions: list[Submission], parts: tuple[str, ...]) -> Iterator[GradedSubmission]:
        from distributed import as_completed
        from distributed.scheduler import KilledWorker

        if not submissions:
            return
        if self.client is None:
            self.connect()
        resources = {GPU: 1} if self.gpu_workers() else None
        futures = {self.client.submit(grade_task, s.to_json(), list(parts), key=f"grade-{i}-{s.id}", retries=RETRIES,
                                      resources=resources, pure=False): s for i, s in enumerate(submissions)}
        for future in as_completed(futures):
            submission = futures[future]
            try:
                yield GradedSubmission.from_json(future.result())
            except KilledWorker:
                yield GradedSubmission(submission.id, problems=list(submission.problems),
                                       error="grading it killed a grading worker again and again")
            except WorkerError as exc:
                if exc.fatal:
                    raise
                yield GradedSubmission(submission.id, problems=list(submission.problems), error=str(exc))

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def security(ca_file: str | None, cert: str | None, key: str | None) -> Any:
    """Mutual TLS for a tls:// scheduler; None leaves it to Dask's configuration."""
    if not (ca_file or cert or key):
        return None
    from distributed.security import Security

    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True)
