"""The graders' only way to reach a submission: name a thing, pass plain data, get plain data back.

A `Student` never holds a submission object. It sends requests through a
channel (a function from request bytes to reply bytes) that is backed either
by a runtime in this process or by a sandboxed process.
"""

from __future__ import annotations

from typing import Any, Callable

from . import wire

Channel = Callable[[bytes], bytes]
MAX_ERROR_TEXT = 6000  # the runtime sends at most 2,000 characters of message and 4,000 of traceback
_MALFORMED = "The submission's process sent a malformed reply (did it write to the grader's socket, or replace the runtime?)."


class StudentError(Exception):
    """A submission's function did not return: missing, a stub, a crash, a timeout."""

    def __init__(self, target: str, info: dict[str, str]):
        super().__init__(info.get("message", ""))
        self.target = target
        self.kind = info.get("kind", "exception")
        self.type = info.get("type", "")
        self.message = info.get("message", "")
        self.traceback = info.get("traceback", "")

    def explain(self) -> str:
        """What a student should read: plain words, then their own traceback."""
        if self.kind == "missing":
            return self.message
        if self.kind == "not_implemented":
            return f"`{self.target}` is not implemented yet (it raised NotImplementedError)."
        if self.kind in ("timeout", "crash", "protocol"):
            return self.message
        return f"`{self.target}` raised {self.type}: {self.message}\n{self.traceback}".rstrip()


class Student:
    """A submission seen through plain data."""

    def __init__(self, channel: Channel, load_errors: list[dict[str, str]] | None = None,
                 close: Callable[[], None] = lambda: None):
        self._channel = channel
        self.load_errors = load_errors or []
        self.close = close  # ends the submission's process once its part is graded

    def load(self, cells: list[tuple[str, str]], inject: list[tuple[list[str], str]]) -> list[dict[str, str]]:
        """Run the submission's cells and inject reference parts; returns the errors the cells raised."""
        errors = self._request("load", None, [], {}, cells=[list(c) for c in cells], inject=[list(i) for i in inject])
        return [_capped(e) for e in errors[:20] if type(e) is dict] if type(errors) is list else []

    def call(self, target: str | wire.Handle, *args: Any, **kwargs: Any) -> Any:
        """target(*args, **kwargs) in the submission; a Handle target calls that object (a module)."""
        return self._request("call", target, args, kwargs)

    def get(self, name: str) -> Any:
        """The value of a variable the submission defines (plain data only)."""
        return self._request("get", name, (), {})

    def call_and_inspect(self, target: str, *args: Any) -> tuple[Any, list[Any]]:
        """(result, the arguments as the call left them): shows in-place modification."""
        reply = self._request("call", target, args, {}, echo_args=True)
        if type(reply) is not list or len(reply) != 2 or type(reply[1]) is not list or len(reply[1]) != len(args):
            raise StudentError(target, {"kind": "protocol", "message": _MALFORMED})
        return reply[0], reply[1]

    def construct(self, name: str, *args: Any, **kwargs: Any) -> wire.Handle:
        """An instance of the submission's class `name`, kept on its side."""
        return self._request("construct", name, args, kwargs)

    def method(self, handle: wire.Handle, method: str, *args: Any) -> Any:
        """One of the few methods graders may call: load_state_dict, state_dict, parameter_shapes, report."""
        return self._request("method", handle, args, {}, method=method)

    def catalogue(self, name: str, *args: Any, **kwargs: Any) -> wire.Handle:
        """A trusted callable from `autograder.catalogue`, built on the submission's side."""
        return self._request("catalogue", name, args, kwargs)

    def _request(self, op: str, target: Any, args: tuple, kwargs: dict, **extra: Any) -> Any:
        request = {"op": op, "target": target, "args": list(args), "kwargs": kwargs, **extra}
        try:
            reply = wire.decode(self._channel(wire.encode(request)))
        except wire.WireError as exc:  # the submission's process can send any bytes at all
            raise StudentError(_label(target), {"kind": "protocol", "message": f"{_MALFORMED} ({exc})"}) from None
        if type(reply) is not dict or type(reply.get("ok")) is not bool:
            raise StudentError(_label(target), {"kind": "protocol", "message": _MALFORMED})
        if not reply["ok"]:
            info = reply.get("error")
            info = _capped(info)
            if info.get("kind") == "missing" and self.load_errors:
                first = self.load_errors[0]
                info["message"] = (f"{info.get('message', '')}\nYour code stopped early: {first.get('cell', '')} raised "
                                   f"{first.get('type', '')}: {first.get('message', '')}\n{first.get('traceback', '')}").rstrip()
            raise StudentError(_label(target), info)
        return reply.get("value")


def _capped(info: Any) -> dict[str, str]:
    """An error description as short strings: a forged reply must not fill the reports with megabytes."""
    if type(info) is not dict:
        return {}
    return {str(k)[:40]: str(v)[:MAX_ERROR_TEXT] for k, v in list(info.items())[:8]}


def _label(target: Any) -> str:
    return target if type(target) is str else "the object"


def in_process_channel() -> tuple[Channel, Any]:
    """A channel to a runtime in this process: the same wire format, but no isolation."""
    from .runtime import Runtime

    runtime = Runtime()

    def channel(request: bytes) -> bytes:
        return wire.encode(runtime.handle(wire.decode(request)))

    return channel, runtime
