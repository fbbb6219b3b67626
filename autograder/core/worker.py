"""A grading worker: a process with one zygote and one pytest session, grading the submissions it
is sent until it is told to stop. The command line runs a few of them side by side; a Dask worker
runs one of its own.

`python -m autograder.core.worker FD` talks over the socket FD in frames of JSON: first the
run's settings (`WorkerSettings`), answered by `{"ready": {"weaknesses": [...]}}`; then one
`{"job": {"submission": ..., "parts": [...]}}` per submission, answered by
`{"graded": ...}` (see `results.GradedSubmission.to_json`). A `{"fatal": why}` answer ends the
run: a sandbox could reach the reference or the graders, or the graders could not run.

The worker never reads a student's files (they arrive as data) and keeps the secret out of its
environment, so the zygote it starts never holds it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Iterator

from ..isolation import wire
from ..isolation.sandbox import Limits

SECRET_VARIABLE = "AUTOGRADER_SECRET"


@dataclass(frozen=True)
class WorkerSettings:
    """What every worker of a run is told once."""

    secret: str = ""
    call_seconds: float = Limits.call_seconds
    budget_seconds: float = 600.0
    secrets: tuple[str, ...] = ()  # paths no sandbox may see (reports, submissions, the course)
    allow_weak: bool = False
    sandbox: dict[str, Any] = field(default_factory=dict)  # other Limits fields, e.g. memory_bytes


class WorkerError(RuntimeError):
    """The worker could not go on: it died (`fatal` False: another may), or it said why no worker
    can grade (`fatal`: a sandbox breach, graders that cannot run)."""

    def __init__(self, message: str, fatal: bool = False):
        super().__init__(message)
        self.fatal = fatal


def main(fd: int) -> None:
    from ..isolation.confinement import die_with_parent

    die_with_parent()
    sys.dont_write_bytecode = True
    sock = socket.socket(fileno=fd)
    settings = WorkerSettings(**_receive(sock)["settings"])
    from ..isolation.sandbox import Zygote
    from .submission import public_files, setup_imports

    limits = Limits(call_seconds=settings.call_seconds, **settings.sandbox)
    zygote = Zygote(limits, settings.secrets, public_files(), setup_imports(), settings.allow_weak)
    try:
        from ..isolation.proxy import SandboxBreach
        from .session import Job, TimeLimits, grade_all, sandbox_backend, configure_grading_process
        from .submission import Submission

        configure_grading_process()
        try:
            _send(sock, {"ready": {"weaknesses": zygote.wait_ready()}})

            def jobs() -> Iterator[Job]:
                while (message := _receive(sock)) is not None:
                    job = message["job"]
                    yield Job(Submission.from_json(job["submission"]), settings.secret, tuple(job["parts"]))

            grade_all(jobs(), sandbox_backend(zygote), TimeLimits(settings.call_seconds, settings.budget_seconds),
                      lambda graded: _send(sock, {"graded": graded.to_json()}))
        except SandboxBreach as exc:
            _send(sock, {"fatal": f"grading refused: {exc}"})
        except Exception as exc:  # noqa: BLE001 - told to the run, which stops
            _send(sock, {"fatal": f"{type(exc).__name__}: {exc}"})
    finally:
        zygote.close()


class WorkerProcess:
    """The run's handle on one grading worker."""

    def __init__(self, settings: WorkerSettings):
        ours, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if k != SECRET_VARIABLE}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.process = subprocess.Popen([sys.executable, "-m", "autograder.core.worker", str(theirs.fileno())],
                                        pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, env=env)
        theirs.close()
        self.sock = ours
        _send(self.sock, {"settings": asdict(settings)})

    def ready(self) -> list[str]:
        """What is weaker than full isolation on this machine; raises WorkerError if it cannot grade."""
        return self._answer("ready")["weaknesses"]

    def grade(self, submission: dict, parts: tuple[str, ...]) -> dict:
        """A submission's `GradedSubmission.to_json()`; raises WorkerError if the worker cannot go on."""
        _send(self.sock, {"job": {"submission": submission, "parts": list(parts)}})
        return self._answer("graded")

    def _answer(self, key: str) -> Any:
        try:
            message = _receive(self.sock)
        except OSError as exc:
            raise WorkerError(f"the grading worker broke the connection ({exc})") from None
        if message is None:
            raise WorkerError(f"the grading worker died (exit status {self.process.wait()})")
        if "fatal" in message:
            raise WorkerError(str(message["fatal"]), fatal=True)
        return message[key]

    def close(self) -> None:
        self.sock.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def _send(sock: socket.socket, message: dict) -> None:
    wire.send_frame(sock, json.dumps(message).encode())


def _receive(sock: socket.socket) -> dict | None:
    frame = wire.recv_frame(sock)
    return None if frame is None else json.loads(frame)


if __name__ == "__main__":
    main(int(sys.argv[1]))
