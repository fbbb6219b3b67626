"""The graders' only way to reach a submission: name a thing, pass plain data, get plain data back.

A `Student` never holds a submission object. It sends requests through a
channel (see `Channel`) backed by a sandboxed process or, for nbgrader grade
cells, by a server in this process. It also keeps the submission's clock: a
call that timed out or ran out of memory is not made again, code whose loading
timed out is not loaded again, and once the submission's time budget is spent no
call is made.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from . import protocol, wire
from .protocol import RAN_OUT_OF_MEMORY, CallbackHandler, SandboxBreach

MAX_ERROR_TEXT = 6000  # the server sends at most 2,000 characters of message and 4,000 of traceback
_MALFORMED = "The submission's process sent a malformed reply (did it write to the grader's socket, or replace the runtime?)."

class Channel(Protocol):
    def __call__(self, request: bytes, seconds: float, on_callback: CallbackHandler) -> bytes:
        """Send `request`, serve callbacks while it runs, return the reply within `seconds`."""


class StudentError(Exception):
    """A submission's function did not return: missing, a stub, a crash, a timeout."""

    def __init__(self, target: str, info: dict[str, str]):
        super().__init__(info.get("message", ""))
        self.target = target
        self.kind = info.get("kind", protocol.EXCEPTION)
        self.type = info.get("type", "")
        self.message = info.get("message", "")
        self.traceback = info.get("traceback", "")

    def explain(self) -> str:
        """What a student should read: plain words, then their own traceback."""
        if self.kind == protocol.NOT_IMPLEMENTED:
            return f"`{self.target}` is not implemented yet (it raised NotImplementedError)."
        if self.kind in (protocol.EXCEPTION, protocol.LOAD_ERROR):
            return f"`{self.target}` raised {self.type}: {self.message}\n{self.traceback}".rstrip()
        if self.kind == protocol.MEMORY and self.type:
            return (f"`{self.target}` {RAN_OUT_OF_MEMORY}: it raised {self.type}: {self.message}\n"
                    f"{self.traceback}").rstrip()
        return self.message


@dataclass
class Clock:
    """One submission's time, shared by the parts graded for it.

    `call_seconds` bounds one call; `budget_seconds` bounds all calls together (the time the
    submission's code had, not the time the grader spent around it). A name whose call timed out
    or ran out of memory is not called again (it would cost as much each time); code whose loading
    timed out is not loaded again."""

    call_seconds: float
    budget_seconds: float
    spent: float = 0.0
    not_called_again: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> the error to give
    load_failure: dict[str, str] | None = None

    def seconds_left(self) -> float:
        return self.budget_seconds - self.spent

    def seconds_for_call(self) -> float:
        return min(self.call_seconds, self.seconds_left())


class Student:
    """A submission seen through plain data."""

    def __init__(self, channel: Channel, clock: Clock, close: Callable[[], None] = lambda: None):
        self._channel = channel
        self.clock = clock
        self.close = close  # ends the submission's process once its part is graded
        self.load_errors: list[dict[str, str]] = []
        self.replies = 0  # replies that carried the submission's values: a check's failure after one is theirs
        self.last_request = (0.0, 0.0)  # (start, end) of the last request, on the grader's clock (time.monotonic)
        self._remotes: dict[int, CallbackHandler] = {}
        self._names: dict[int, str] = {}  # handle -> the name of the class it was built from

    def load(self, cells: list[tuple[str, str]], inject: list[tuple[list[str], str]]) -> None:
        """Run the submission's cells and inject reference parts; keeps the errors the cells raised."""
        if self.clock.load_failure is not None:
            return  # every request will say why
        try:
            errors = self._request(protocol.LOAD, None, [], {}, cells=[list(c) for c in cells],
                                   inject=[list(i) for i in inject])
        except StudentError as exc:
            if exc.kind not in (protocol.TIMEOUT, protocol.BUDGET):
                raise
            self.clock.load_failure = {"kind": exc.kind, "message": (
                f"Your code did not finish loading: {exc.message} Nothing of it could be graded "
                "(an infinite loop or a long computation at the top level of a cell?)")}
            return
        self.load_errors = [_capped(e) for e in errors[:20] if type(e) is dict] if type(errors) is list else []

    def call(self, target: str | wire.Handle, *args: Any, **kwargs: Any) -> Any:
        """target(*args, **kwargs) in the submission; a Handle target calls that object (a module)."""
        return self._request(protocol.CALL, target, args, kwargs)

    def get(self, name: str) -> Any:
        """The value of a variable the submission defines (plain data only)."""
        return self._request(protocol.GET, name, (), {})

    def call_and_inspect(self, target: str | wire.Handle, *args: Any) -> tuple[Any, list[Any]]:
        """(result, the arguments as the call left them): shows in-place modification."""
        reply = self._request(protocol.CALL, target, args, {}, echo_args=True)
        if type(reply) is not list or len(reply) != 2 or type(reply[1]) is not list or len(reply[1]) != len(args):
            raise StudentError(self._label(target), {"kind": protocol.PROTOCOL, "message": _MALFORMED})
        return reply[0], reply[1]

    def construct(self, name: str, *args: Any, **kwargs: Any) -> wire.Handle:
        """An instance of the submission's class `name`, kept on its side."""
        handle = self._request(protocol.CONSTRUCT, name, args, kwargs)
        if type(handle) is not wire.Handle:
            raise StudentError(name, {"kind": protocol.PROTOCOL, "message": _MALFORMED})
        self._names[handle.id] = name
        return handle

    def method(self, handle: wire.Handle, method: str, *args: Any) -> Any:
        """One of the few methods graders may call (protocol.METHODS)."""
        return self._request(protocol.METHOD, handle, args, {}, method=method)

    def catalogue(self, name: str, *args: Any, **kwargs: Any) -> wire.Handle:
        """A trusted callable from `autograder.isolation.catalogue`, built on the submission's side."""
        return self._request(protocol.CATALOGUE, name, args, kwargs)

    def remote(self, handler: CallbackHandler) -> wire.Handle:
        """A callable on the submission's side whose every call runs `handler` here, in the grader:
        its cost and its records stay out of the submission's reach."""
        key = len(self._remotes) + 1
        self._remotes[key] = handler
        return self._request(protocol.REMOTE, key, (), {})

    @property
    def last_seconds(self) -> float:
        """How long the last request took, on the grader's clock."""
        return self.last_request[1] - self.last_request[0]

    def _serve_callback(self, message: dict) -> Any:
        handler = self._remotes.get(message.get("handle")) if type(message.get("handle")) is int else None
        if handler is None:
            raise wire.WireError("a callback for no remote callable")
        return handler(message.get("args"))

    def _request(self, op: str, target: Any, args: tuple | list, kwargs: dict, **extra: Any) -> Any:
        label = self._label(target)
        if self.clock.load_failure is not None and op != protocol.LOAD:
            raise StudentError(label, self.clock.load_failure)
        if label in self.clock.not_called_again:
            raise StudentError(label, dict(self.clock.not_called_again[label]))
        seconds = self.clock.seconds_for_call()
        if seconds <= 0:
            raise StudentError(label, {"kind": protocol.BUDGET, "message": (
                f"Not run: the time budget for your whole submission ({self.clock.budget_seconds:g} s) was used up "
                "by earlier calls.")})
        start = time.monotonic()
        try:
            raw = self._channel(wire.encode(protocol.request(op, target, args, kwargs, **extra)), seconds,
                                self._serve_callback)
            reply = wire.decode(raw)
        except wire.WireError as exc:  # the submission's process can send any bytes at all
            raise StudentError(label, {"kind": protocol.PROTOCOL, "message": f"{_MALFORMED} ({exc})"}) from None
        finally:
            self.last_request = (start, time.monotonic())
            self.clock.spent += self.last_seconds
        if type(reply) is not dict or type(reply.get("ok")) is not bool:
            raise StudentError(label, {"kind": protocol.PROTOCOL, "message": _MALFORMED})
        if reply["ok"]:
            self.replies += 1
            return reply.get("value")
        info = _capped(reply.get("error"))
        kind = info.get("kind")
        if kind == protocol.BREACH:
            raise SandboxBreach(info.get("message", ""))
        if kind == protocol.TIMEOUT:
            if seconds < self.clock.call_seconds:  # it was the budget, not the call limit, that ran out
                info["kind"], info["message"] = protocol.BUDGET, (
                    f"Stopped: the time budget for your whole submission ({self.clock.budget_seconds:g} s) ran out "
                    "during this call.")
            elif op != protocol.LOAD:
                self.clock.not_called_again[label] = {"kind": kind, "message": (
                    f"An earlier call of `{label}` timed out (it did not finish within {self.clock.call_seconds:g} s: "
                    "an infinite loop?), so it is not called again.")}
        if kind == protocol.MEMORY and op != protocol.LOAD:
            self.clock.not_called_again[label] = {"kind": kind, "message": (
                f"An earlier call of `{label}` {RAN_OUT_OF_MEMORY}, so it is not called again.")}
        if kind == protocol.MISSING and self.load_errors:
            first = self.load_errors[0]
            info["message"] = (f"{info.get('message', '')}\nYour code stopped early: {first.get('cell', '')} raised "
                               f"{first.get('type', '')}: {first.get('message', '')}\n{first.get('traceback', '')}").rstrip()
        raise StudentError(label, info)

    def _label(self, target: Any) -> str:
        if type(target) is str:
            return target
        if type(target) is wire.Handle and target.id in self._names:
            return self._names[target.id]
        return "the object"


def _capped(info: Any) -> dict[str, str]:
    """An error description as short strings: a forged reply must not fill the reports with megabytes."""
    if type(info) is not dict:
        return {}
    return {str(k)[:40]: str(v)[:MAX_ERROR_TEXT] for k, v in list(info.items())[:8]}


def in_process_channel() -> Channel:
    """A channel to a server in this process: the same wire format, but no isolation and no time limit."""
    from .server import Runtime

    runtime = Runtime()

    def channel(request: bytes, seconds: float, on_callback: CallbackHandler) -> bytes:
        runtime.callback = lambda message: on_callback(wire.decode(wire.encode(message)))
        return wire.encode(runtime.handle(wire.decode(request)))

    return channel
