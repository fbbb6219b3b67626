"""What the grader serves to a submission's code: the other parts' names and the functions a check
hands over, computed here, never in the sandbox.

While part P is graded, the submission's code may call the names of the other parts (its
`CausalSelfAttention` calls `causal_mask`): they are the reference's, so that one mistake costs
points once. The sandbox holds none of their code (`isolation.catalogue.Served`): each call comes
back to the grading worker, which has it computed by a reference process of its own, forked from
the worker, on the CPU. That process has one job and a cap on its memory, and each call has the
calling sandbox's deadline, so a call the submission sized (`causal_mask(10**6)`) costs the grader
nothing but that process, which is killed and forked again. Results go back on the device the
submission's arguments were on.
"""

from __future__ import annotations

import inspect
import os
import resource
import secrets
import signal
import socket
import time
from typing import Any, Callable

import torch

import attention_ref

from .. import assignment
from ..isolation import frames, protocol, wire
from ..isolation.deadline import cpu_time
from ..isolation.proxy import ServedError, ServedHandler

REFERENCE_MEMORY_BYTES = 512 * 2**20  # beyond what the reference process maps when it starts
MAX_INSTANCES = 32  # served objects (a CausalSelfAttention) kept per submission's part
READY_SECONDS = 10.0  # how long a reference process may take to set itself up


def _self_attention(x: torch.Tensor) -> torch.Tensor:
    """Parameter-free attention of the tokens on each other: permutation-equivariant."""
    return attention_ref.materialized_attention(x, x, x)


def _causal_self_attention(x: torch.Tensor) -> torch.Tensor:
    """The same with a causal mask: order matters, so not permutation-equivariant."""
    return attention_ref.scaled_dot_product_attention(x, x, x, attention_ref.causal_mask(x.shape[-2], device=x.device))[0]


def _running_sum(x: torch.Tensor) -> torch.Tensor:
    """Each token plus all before it: depends on order."""
    return x.cumsum(dim=-2)


def _doubled(x: torch.Tensor) -> torch.Tensor:
    """Token-wise and so trivially permutation-equivariant."""
    return 2 * x


# Functions a check hands to the submission's code, served by name (the submission sees only a handle).
WORKLOADS: dict[str, Callable[..., Any]] = {
    "self_attention": _self_attention, "causal_self_attention": _causal_self_attention,
    "running_sum": _running_sum, "doubled": _doubled, "materialized_attention": attention_ref.materialized_attention,
}


def _servable(name: str) -> Any:
    return WORKLOADS[name] if name in WORKLOADS else getattr(attention_ref, name)


def other_parts_names(part_name: str) -> list[tuple[str, str]]:
    """(name, "class" or "function") of every name another part defines: what is served while
    `part_name` is graded."""
    found = []
    for p in assignment.PARTS:
        if p.name != part_name and assignment.part(part_name).names:
            found += [(name, "class" if isinstance(_servable(name), type) else "function") for name in p.names]
    return found


class _Computation:
    """Runs served calls: the reference's names and the workloads, on the CPU, in this process."""

    def __init__(self) -> None:
        self.instances: dict[tuple[str, int], Any] = {}

    def run(self, scope: str, name: str, method: str, args: list, kwargs: dict) -> Any:
        target = _servable(name)
        _refuse_what_is_not_data(args, kwargs)
        with torch.no_grad():
            if method == "new" and isinstance(target, type):
                return self._keep(scope, target(*args, **kwargs))
            if method == "call" and isinstance(target, type):
                if not args or (scope, args[0]) not in self.instances:
                    raise TypeError(f"not a {name} made by the grader")
                return self.instances[(scope, args[0])](*args[1:], **kwargs)
            if method == "call":
                return target(*args, **kwargs)
        raise TypeError(f"{name} cannot be called that way ({method})")

    def _keep(self, scope: str, obj: Any) -> int:
        key = max((k for s, k in self.instances if s == scope), default=0) + 1
        if len(self.instances) >= MAX_INSTANCES:
            del self.instances[next(iter(self.instances))]
        self.instances[(scope, key)] = obj
        return key


def _refuse_what_is_not_data(*values: Any) -> None:
    for value in values:
        if isinstance(value, (wire.Opaque, wire.Handle)):
            raise TypeError(f"only plain data (tensors, numbers, lists) can be passed to a name the grader serves, "
                            f"not {value}")
        if isinstance(value, (list, tuple)):
            _refuse_what_is_not_data(*value)
        elif isinstance(value, dict):
            _refuse_what_is_not_data(*value.values())


def _to_cpu(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, torch.device):
        return torch.device("cpu")
    if isinstance(value, str) and value.startswith("cuda"):
        return "cpu"
    if isinstance(value, (list, tuple)):
        return type(value)(_to_cpu(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    return value


def _to_device(value: Any, device: torch.device) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(_to_device(v, device) for v in value)
    return value


def _device_of(args: list, kwargs: dict) -> torch.device:
    """Where the results go: the device of the first tensor argument, else the `device=` argument."""
    for value in [*args, *kwargs.values()]:
        if isinstance(value, torch.Tensor):
            return value.device
    device = kwargs.get("device")
    try:
        return torch.device(device) if isinstance(device, (str, torch.device)) else torch.device("cpu")
    except (RuntimeError, TypeError):
        return torch.device("cpu")


class ReferenceProcess:
    """The process that computes served calls for one grading worker, forked from it when first
    needed and again after it was killed (a call ran out of time or memory)."""

    def __init__(self) -> None:
        self._sock: socket.socket | None = None
        self._pid = 0
        self._ended_seconds = 0.0  # the CPU time of the processes that were killed and forked again

    def fresh_pids(self) -> list[int]:
        """The process that computes this worker's served calls, started afresh: what it holds during a measured
        call is the call's (isolation.held), counted from what it holds once set up (it is not dumpable, so a
        grader that is not root could not reset an older one's peak)."""
        self.close()
        self._ready()
        return [self._pid]

    def cpu_seconds(self) -> float:
        """The CPU seconds every reference process of this worker has used: work done for the submission
        graded now, whose served calls they computed (isolation.deadline counts it as the submission's)."""
        return self._ended_seconds + ((cpu_time(self._pid) or 0.0) if self._pid else 0.0)

    def call(self, scope: str, name: str, method: str, args: list, kwargs: dict, deadline: float) -> Any:
        """The value of a served call, on the device of its arguments; raises ServedError for what it
        raised, or when it overran `deadline` or the memory cap (then the process is killed)."""
        device = _device_of(args, kwargs)
        request = wire.encode({"scope": scope, "name": name, "method": method, "args": _to_cpu(args),
                               "kwargs": _to_cpu(kwargs)})
        sock = self._ready()
        try:
            frames.send_frame(sock, request)
            frame = frames.recv_frame(sock, deadline=max(deadline, time.monotonic() + 0.05))
        except (OSError, TimeoutError, frames.FrameError):
            frame = None
        if frame is None:
            self.close()
            raise ServedError("TimeoutError", f"{name} (computed by the grader) did not finish in the time your "
                                              "call had left")
        reply = wire.decode(frame)
        if reply.get("ok"):
            return _to_device(reply.get("value"), device)
        raise ServedError(str(reply["error"].get("type", "RuntimeError")), str(reply["error"].get("message", "")))

    def _ready(self) -> socket.socket:
        if self._sock is None:
            ours, theirs = socket.socketpair()
            pid = os.fork()
            if pid == 0:
                ours.close()
                _serve(theirs)
            theirs.close()
            self._sock, self._pid = ours, pid
            try:  # set up (what it holds from now on is what its calls allocate)
                frames.recv_frame(ours, deadline=time.monotonic() + READY_SECONDS)
            except (OSError, TimeoutError, frames.FrameError):
                pass  # its first call finds out
        return self._sock

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._pid:
            self._ended_seconds += cpu_time(self._pid) or 0.0
            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self._pid = 0


def _serve(sock: socket.socket) -> None:
    """The reference process's loop: one call at a time until the worker closes the line."""
    from ..isolation.confinement import cap_memory, die_with_parent, without_heap_slack

    try:
        die_with_parent()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        without_heap_slack()  # what a served call allocates shows in this process's peak (isolation.held)
        cap_memory(REFERENCE_MEMORY_BYTES)
        torch.set_num_threads(1)
        computation = _Computation()
        frames.send_frame(sock, b"ready")
        while (frame := frames.recv_frame(sock)) is not None:
            try:
                request = wire.decode(frame)
                value = computation.run(request["scope"], request["name"], request["method"], request["args"],
                                        request["kwargs"])
                reply = protocol.ok(value)
            except BaseException as exc:  # noqa: BLE001 - every failure goes back as the call's
                reply = protocol.error(protocol.EXCEPTION, _message(exc), type(exc).__name__)
            frames.send_frame(sock, wire.encode(reply))
    finally:
        os._exit(0)


def _message(exc: BaseException) -> str:
    if isinstance(exc, MemoryError) or "can't allocate memory" in str(exc):
        return f"the call needs more memory than the grader gives a served call ({REFERENCE_MEMORY_BYTES // 2**20} MiB)"
    return str(exc)[:1000]


class InProcessReference:
    """Served calls computed in this very process: for nbgrader grade cells, which already run in the
    student's kernel (no isolation there to keep)."""

    def __init__(self) -> None:
        self._computation = _Computation()

    def call(self, scope: str, name: str, method: str, args: list, kwargs: dict, deadline: float) -> Any:
        try:
            return self._computation.run(scope, name, method, args, kwargs)
        except Exception as exc:  # noqa: BLE001 - raised again in the submission's code
            raise ServedError(type(exc).__name__, str(exc)[:1000]) from None

    def close(self) -> None:
        pass


Reference = ReferenceProcess | InProcessReference


def served_names(part_name: str, reference: Reference,
                 deadline: Callable[[], float]) -> list[tuple[str, str, ServedHandler, list[list]]]:
    """The handlers of every name served while `part_name` is graded, with the signature each serves (see
    proxy.Student.load)."""
    scope = secrets.token_hex(8)

    def handler(name: str) -> ServedHandler:
        return lambda method, args, kwargs: reference.call(scope, name, method, args, kwargs, deadline())

    return [(name, kind, handler(name), spec_parameters(name)) for name, kind in other_parts_names(part_name)]


def spec_parameters(name: str) -> list[list]:
    """The parameters of SPEC's signature of a served name, as plain data: [name, kind (inspect's), has a
    default]. The reference's signature is SPEC's. A call the submission makes that this signature refuses is
    served by the submission's own function of that name, where it has one (catalogue.Served): SPEC lets a
    graded function take more optional arguments, and the student's own functions pass them to each other."""
    return [[p.name, p.kind.name, p.default is not p.empty] for p in inspect.signature(_servable(name)).parameters.values()]


def workload(name: str, reference: Reference, deadline: Callable[[], float]) -> ServedHandler:
    """The handler of a check's function `name` (WORKLOADS) handed to the submission's code."""
    scope = secrets.token_hex(8)
    return lambda method, args, kwargs: reference.call(scope, name, method, args, kwargs, deadline())
