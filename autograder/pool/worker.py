"""A grading worker: one pytest session, grading the submissions it is sent until it is told to stop,
with sandboxes from a zygote. The command line runs several side by side, forked from inside one
session that has collected the graders once (the workers' parent, `pool.parent`) and sharing one
zygote; a Dask worker runs one of its own (`python -m autograder.pool.worker FD`), with its own zygote.

A run talks to a worker over a socket in frames of JSON: first the run's settings
(`WorkerSettings.to_json`), answered by `{"ready": {"weaknesses": [...]}}`; then one
`{"job": {"submission": ..., "parts": [...]}}` per submission, answered by `{"graded": ...}`
(`results.GradedSubmission.to_json`). A `{"fatal": why}` answer ends the run: a sandbox could
reach the reference or the graders, or the graders could not run.

A worker never reads a student's files (they arrive as data), and the zygote never holds the
secret: it is started with an environment that lacks it and is told only what sandboxes need.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Callable, Iterator

from .. import assignment, releases
from ..isolation import frames
from ..isolation.fields import JsonFields, SettingsError
from ..isolation.limits import Limits

if TYPE_CHECKING:
    from ..isolation.sandbox import Stoppable, Zygote, ZygoteClient

SECRET_VARIABLE = "AUTOGRADER_SECRET"
ALLOCATOR_SETTINGS = ("MALLOC_", "GLIBC_TUNABLES")  # glibc's, from the environment: a standalone worker runs without them
FDS_PER_MESSAGE = 250  # descriptors sent at once (Linux takes at most 253 in one message)
# What the process that forks local workers imports once for all of them (pool.parent).
PRELOAD = ["torch", "pytest", "attention_ref", "autograder.engine.session", "autograder.engine.checks",
           *(f"autograder.graders.{p.grader_module.removesuffix('.py')}" for p in assignment.PARTS)]


@dataclass(frozen=True)
class WorkerSettings(JsonFields):
    """What every worker of a run is told once (as JSON, by field name: `to_json`, `from_json`)."""

    secret: str = ""
    limits: Limits = Limits()  # what each submission may use: its time here, its resources in its sandboxes
    secrets: tuple[str, ...] = ()  # paths no sandbox may see (reports, submissions, the course)
    allow_weak: bool = False
    cpu_slots: tuple[int, ...] = ()  # descriptors of the run's CPU gate and slots (engine.slots): a worker is sent its own
    # the release graded against, by file name (an nbgrader course's own build: autograder.releases); empty: the
    # grader's own copy
    release: dict[str, bytes] = dataclasses.field(default_factory=dict)


class WorkerFault(Enum):
    """Why a worker could not go on, which decides what the run does next (and its exit status)."""

    DIED = "died"  # this worker died or broke its connection: another may grade
    CANNOT_START = "cannot start"  # no worker can grade here (graders that cannot run, other versions)
    REFUSED = "refused"  # a sandbox could reach what it must not: no worker may grade


_FATAL_KINDS = (WorkerFault.CANNOT_START.value, WorkerFault.REFUSED.value)


class WorkerError(RuntimeError):
    """The worker could not go on, and why (`kind`): it died (another may go on), or it said why no worker
    can grade (`fatal`: grading refused, or cannot start)."""

    def __init__(self, message: str, kind: WorkerFault = WorkerFault.DIED):
        super().__init__(message)
        self.kind = kind

    @property
    def fatal(self) -> bool:
        return self.kind is not WorkerFault.DIED

    def __reduce__(self) -> tuple:
        return WorkerError, (str(self), self.kind)  # as it crosses from a Dask worker to the client


def start_zygote(settings: WorkerSettings, forked_by: Callable[[bytes, socket.socket], Stoppable] | None = None) -> Zygote:
    """The zygote for a run's sandboxes; it starts importing at once (see `Zygote.wait_ready`), or is
    forked by `forked_by` (`WorkersParent.fork_zygote`)."""
    from ..isolation.sandbox import Zygote
    from ..model.submission import public_files, setup_imports

    release = release_of(settings)
    return Zygote(settings.limits, settings.secrets, public_files(release), setup_imports(release),
                  settings.allow_weak, forked_by=forked_by)


def release_of(settings: WorkerSettings) -> releases.Release | None:
    """The release a worker grades against: the one its run sent (None: the grader's own copy)."""
    return releases.Release(settings.release, "the run's release") if settings.release else None


def serve(sock: socket.socket, settings: WorkerSettings, zygote: ZygoteClient, grade_all: Callable[..., None]) -> None:
    """The worker's loop: jobs until the run closes the socket, graded by `grade_all` (`session.grade_all`,
    or `session.grading_in` in a session already collected)."""
    from ..isolation.protocol import SandboxBreach
    from ..engine.session import Job, configure_grading_process, sandbox_backend
    from ..engine.slots import CpuSlots
    from ..model.submission import Submission

    slots = CpuSlots(list(settings.cpu_slots)) if settings.cpu_slots else None  # opened while /proc/self is ours
    configure_grading_process()
    try:
        weaknesses = zygote.wait_ready() if hasattr(zygote, "wait_ready") else []
        _send(sock, {"ready": {"weaknesses": weaknesses, "isolation": getattr(zygote, "isolation", "")}})

        def jobs() -> Iterator[Job]:
            while (message := _receive(sock)) is not None:
                job = message["job"]
                yield Job(Submission.from_json(job["submission"]), settings.secret, tuple(job["parts"]))

        grade_all(jobs(), sandbox_backend(zygote), settings.limits,
                  lambda graded: _send(sock, {"graded": graded.to_json()}), slots, release_of(settings))
    except SandboxBreach as exc:
        _send(sock, {"fatal": f"grading refused: {exc}", "kind": WorkerFault.REFUSED.value})
    except Exception as exc:  # noqa: BLE001 - told to the run, which stops
        _send(sock, {"fatal": f"{type(exc).__name__}: {exc}", "kind": WorkerFault.CANNOT_START.value})


def main(fd: int) -> None:
    """A standalone worker (a Dask worker's): its own zygote, started before torch is imported here."""
    from ..isolation.confinement import die_with_parent

    die_with_parent()
    sys.dont_write_bytecode = True
    sock = socket.socket(fileno=fd)
    settings = _settings(sock)
    zygote = start_zygote(settings)
    try:
        from ..engine.session import grade_all

        serve(sock, settings, zygote, grade_all)
    finally:
        zygote.close()


def forked_main(sock_fd: int, zygote_fd: int, plugin: Any, by_part: dict) -> None:
    """A local worker, forked by the workers' parent inside its session (`plugin`, the collected items
    `by_part`); its sandboxes come from the run's zygote."""
    from ..isolation.confinement import die_with_parent
    from ..isolation.sandbox import ZygoteClient
    from ..engine.session import grading_in

    die_with_parent()
    client = ZygoteClient(socket.socket(fileno=zygote_fd))
    sock = socket.socket(fileno=sock_fd)
    try:
        serve(sock, _settings(sock), client, grading_in(plugin, by_part))
    except (BrokenPipeError, ConnectionResetError):
        pass  # the run closed its line (it ended, or was interrupted): there is no one left to tell
    finally:
        client.close()


class WorkerProcess:
    """A run's handle on one grading worker."""

    def __init__(self, settings: WorkerSettings, sock: socket.socket, process: Any):
        self.sock, self._process = sock, process
        _send(self.sock, {"settings": settings.to_json()})
        for start in range(0, len(settings.cpu_slots), FDS_PER_MESSAGE):
            socket.send_fds(self.sock, [b"S"], list(settings.cpu_slots[start:start + FDS_PER_MESSAGE]))

    @classmethod
    def local(cls, settings: WorkerSettings, zygote: Zygote, parent: Any) -> "WorkerProcess":
        """A worker forked by `parent` (`pool.parent.WorkersParent`), sharing `zygote`; raises
        RuntimeError or OSError when the parent is gone."""
        ours, theirs = socket.socketpair()
        line = zygote.attach()
        try:
            process = parent.fork_worker(theirs, line)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
            line.close()
        return cls(settings, ours, process)

    @classmethod
    def standalone(cls, settings: WorkerSettings) -> "WorkerProcess":
        """A worker in a fresh interpreter, with a zygote of its own (a Dask worker's). It runs glibc's own
        allocator settings, as a worker on one machine does: a Dask nanny sets its workers' (a heap trimmed at
        64 KiB), which would make the grader's own clock of the tiles work check slower on Dask than elsewhere."""
        ours, theirs = socket.socketpair()
        env = {k: v for k, v in os.environ.items() if k != SECRET_VARIABLE and not k.startswith(ALLOCATOR_SETTINGS)}
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        process = subprocess.Popen([sys.executable, "-m", "autograder.pool.worker", str(theirs.fileno())],
                                   pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, env=env)
        theirs.close()
        return cls(settings, ours, process)

    def ready(self) -> list[str]:
        """What is weaker than full isolation on this machine (and, as `isolation`, what confines each
        sandbox there); raises WorkerError if it cannot grade."""
        answer = self._answer("ready")
        self.isolation = str(answer.get("isolation", ""))
        return answer["weaknesses"]

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
            status = self._process.wait()
            raise WorkerError("the grading worker died" + (f" (exit status {status})" if status is not None else ""))
        if "fatal" in message:
            kind = message.get("kind")
            raise WorkerError(str(message["fatal"]), WorkerFault(kind) if kind in _FATAL_KINDS else WorkerFault.CANNOT_START)
        return message[key]

    def close(self) -> None:
        from ..isolation.sandbox import wait_or_kill

        self.sock.close()
        wait_or_kill(self._process, 30)


def _send(sock: socket.socket, message: dict) -> None:
    frames.send_frame(sock, json.dumps(message).encode())


def _receive(sock: socket.socket) -> dict | None:
    frame = frames.recv_frame(sock)
    return None if frame is None else json.loads(frame)


def _settings(sock: socket.socket) -> WorkerSettings:
    """The run's settings, with this process's own descriptors of the CPU slots: they are sent, not
    inherited, since a worker forks from the workers' parent, which has none of the run's descriptors."""
    message = _receive(sock)
    if message is None:
        raise SystemExit(0)  # the run went away before it said anything
    try:
        settings = WorkerSettings.from_json(message.get("settings"))
    except SettingsError as exc:  # a run of another version of the grader: it is told why, and stops
        _send(sock, {"fatal": f"the grading worker cannot read the run's settings: {exc}"})
        raise SystemExit(1) from None
    slots: list[int] = []
    while len(slots) < len(settings.cpu_slots):
        data, fds, _, _ = socket.recv_fds(sock, 1, FDS_PER_MESSAGE)
        if not data:
            raise SystemExit(0)
        slots.extend(fds)
    return dataclasses.replace(settings, cpu_slots=tuple(slots))


if __name__ == "__main__":
    main(int(sys.argv[1]))
