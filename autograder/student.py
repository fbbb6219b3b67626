"""The graders' only way to reach a submission: name a thing, pass plain data, get plain data back.

A `Student` never holds a submission object. It sends requests through a
channel (a function from request bytes to reply bytes) that is backed either
by a runtime in this process or by a sandboxed process.
"""

from __future__ import annotations

from typing import Any, Callable

from . import wire

Channel = Callable[[bytes], bytes]


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

    def __init__(self, channel: Channel, load_errors: list[dict[str, str]] | None = None):
        self._channel = channel
        self.load_errors = load_errors or []

    def load(self, cells: list[tuple[str, str]], inject: list[tuple[list[str], str]]) -> list[dict[str, str]]:
        """Run the submission's cells and inject reference parts; returns the errors the cells raised."""
        errors = self._request("load", None, [], {}, cells=[list(c) for c in cells], inject=[list(i) for i in inject])
        return [e for e in errors if type(e) is dict] if type(errors) is list else []

    def call(self, target: str | wire.Handle, *args: Any, **kwargs: Any) -> Any:
        """target(*args, **kwargs) in the submission; a Handle target calls that object (a module)."""
        return self._request("call", target, args, kwargs)

    def get(self, name: str) -> Any:
        """The value of a variable the submission defines (plain data only)."""
        return self._request("get", name, (), {})

    def call_and_inspect(self, target: str, *args: Any) -> tuple[Any, list[Any]]:
        """(result, the arguments as the call left them): shows in-place modification."""
        value, args_after = self._request("call", target, args, {}, echo_args=True)
        return value, args_after

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
        reply = wire.decode(self._channel(wire.encode(request)))
        if type(reply) is not dict or type(reply.get("ok")) is not bool:
            raise StudentError(str(target), {"kind": "protocol", "message": "the submission's process sent a malformed reply"})
        if not reply["ok"]:
            info = reply.get("error")
            info = {k: str(v) for k, v in info.items()} if type(info) is dict else {}
            if info.get("kind") == "missing" and self.load_errors:
                first = self.load_errors[0]
                info["message"] = (f"{info.get('message', '')}\nYour code stopped early: {first.get('cell', '')} raised "
                                   f"{first.get('type', '')}: {first.get('message', '')}\n{first.get('traceback', '')}").rstrip()
            raise StudentError(_label(target), info)
        return reply.get("value")


def _label(target: Any) -> str:
    return target if type(target) is str else "the object"


def in_process_channel() -> tuple[Channel, Any]:
    """A channel to a runtime in this process: the same wire format, but no isolation."""
    from .runtime import Runtime

    runtime = Runtime()

    def channel(request: bytes) -> bytes:
        return wire.encode(runtime.handle(wire.decode(request)))

    return channel, runtime
