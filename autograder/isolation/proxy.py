"""The graders' only way to reach a submission: name a thing, pass plain data, get plain data back.

A `Student` never holds a submission object. It sends requests through a
channel (see `Channel`) backed by a sandboxed process or, for nbgrader grade
cells, by a server in this process. It also keeps the submission's clock: a
call that timed out or ran out of memory is not made again, code whose loading
timed out is not loaded again, and once the submission's time budget is spent no
call is made.
"""

from __future__ import annotations

import os
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence, cast

from . import protocol, wire
from .forked import answer_of_child
from .limits import Limits
from .protocol import RAN_OUT_OF_MEMORY, CallbackHandler

# A served callable's handler: (method, args, kwargs) -> the value the submission's code receives.
# "call" for a function or an instance, "new" to construct one; raise ServedError for what it raised.
ServedHandler = Callable[[str, list, dict], Any]
MAX_SEEN_TENSORS = 16

MAX_ERROR_TEXT = 6000  # the server sends at most 2,000 characters of message and 4,000 of traceback
# the kinds of error a sandbox's own runtime sends (protocol.PROTOCOL: what the grader says of a message it
# never asked for); any other came from the submission's code
HONEST_ERRORS = (protocol.EXCEPTION, protocol.NOT_IMPLEMENTED, protocol.MISSING, protocol.LOAD_ERROR, protocol.TIMEOUT,
                 protocol.MEMORY, protocol.CRASH)
LOADING = "while loading: "
_MALFORMED = "The submission's process sent a malformed reply (did it write to the grader's socket, or replace the runtime?)."

class Channel(Protocol):
    last_work_seconds: float | None  # the CPU time the last request caused wherever it ran (kernel); None: unknown
    last_held: int | str | None  # the bytes the last measured request held at once, or why that is unknown

    def __call__(self, request: bytes, seconds: float, on_callback: CallbackHandler,
                 warmup: bytes | None = None) -> bytes:
        """Send `request`, serve callbacks while it runs, return the reply within `seconds`; with `warmup`,
        in a process of its own, discarded afterwards, after `warmup` there, and measured (`last_held`)."""


class StudentError(Exception):
    """A submission's function did not return: missing, a stub, a crash, a timeout."""

    def __init__(self, target: str, info: dict[str, str]):
        super().__init__(info.get("message", ""))
        self.target = target
        self.kind = info.get("kind", protocol.EXCEPTION)
        self.type = info.get("type", "")
        self.message = info.get("message", "")
        self.traceback = info.get("traceback", "")
        self.detail = info.get("detail", "")[:60]  # how a crashed process ended: "signal 11 (SIGSEGV)"

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
    """One submission's time, shared by the parts graded for it, within its `limits`.

    `limits.call_seconds` bounds one call; `limits.budget_seconds` bounds all calls together (the time
    the submission's code had, not the time the grader spent around it). A name whose call timed out
    or ran out of memory is not called again (it would cost as much each time); code whose loading
    timed out is not loaded again. After the first call that timed out, the submission is on a
    short leash: each later call gets at most `limits.leash_seconds`, and all of them together one
    more `call_seconds`, so one looping submission costs the class about two time limits, not one per
    function."""

    limits: Limits
    spent: float = 0.0
    stopped: float = 0.0  # the limits of the calls stopped for running past them, together: what looping cost
    leash_left: float | None = None  # what the calls after the first timeout have left together
    not_called_again: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> the error to give
    load_failure: dict[str, str] | None = None

    def seconds_left(self) -> float:
        return self.limits.budget_seconds - self.spent

    def seconds_for_call(self) -> float:
        return self.limit()[0]

    def limit(self) -> tuple[float, str]:
        """(seconds the next call may take, what bounds it: "call", "leash" or "budget")."""
        bounds = [(self.limits.call_seconds, "call"), (self.seconds_left(), "budget")]
        if self.leash_left is not None:
            bounds += [(min(self.limits.leash_seconds, self.leash_left), "leash")]
        return min(bounds)

    def charge(self, seconds: float) -> None:
        self.spent += seconds
        if self.leash_left is not None:
            self.leash_left -= seconds


class Student:
    """A submission seen through plain data."""

    def __init__(self, channel: Channel, clock: Clock, close: Callable[[], object] = lambda: None):
        self._channel = channel
        self.clock = clock
        self.close = close  # ends the submission's process once its part is graded
        self.load_errors: list[dict[str, str]] = []
        self.replies = 0  # replies that carried the submission's values: a check's failure after one is theirs
        self.work_seconds = 0.0  # the CPU time its requests caused, by the kernel (by the wall where it did not count)
        self.last_request = (0.0, 0.0)  # (start, end) of the last request, on the grader's clock (time.monotonic)
        self.deadline = 0.0  # when the request in progress must be answered (time.monotonic)
        self._served: dict[int, ServedHandler] = {}  # random handle -> what serves its calls
        self._names: dict[int, str] = {}  # handle -> the name of the class it was built from
        self.forged: list[str] = []  # what its process sent that no honest one sends, in the grader's words
        self.unread = ""  # why none of the submission's code is here (its notebook not found or not read), or ""

    def load(self, cells: list[tuple[str, str]], served: Sequence[tuple[str, str, ServedHandler, list | None]] = ()) -> None:
        """Run the submission's cells, then put in place the names the grader serves: (name, "function"
        or "class", handler, the parameters of the signature it serves or None: see
        catalogue.Served). Keeps the errors the cells raised."""
        if self.clock.load_failure is not None:
            return  # every request will say why
        names = [[name, kind, self._register(handler), parameters] for name, kind, handler, parameters in served]
        try:
            errors = self._request(protocol.LOAD, None, [], {}, cells=[list(c) for c in cells])
            self._request(protocol.SERVE, None, [], {}, served=names)
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

    def call_holding(self, warmup: tuple[tuple, dict], target: str | wire.Handle, *args: Any,
                     **kwargs: Any) -> tuple[Any, int | str]:
        """target(*args, **kwargs) in a process of its own, discarded afterwards, right after
        target(*warmup[0], **warmup[1]) there (so that what the code imports or sets up on its first use is
        not the call's), and the bytes it held at once wherever it ran (in that process, in processes of its
        sandbox, in the names the grader served it: isolation.held), or why that is unknown."""
        warmup_request = wire.encode(protocol.request(protocol.CALL, target, list(warmup[0]), dict(warmup[1])))
        value = self._request(protocol.CALL, target, args, kwargs, measured=True, warmup=warmup_request)
        held = self._channel.last_held
        return value, held if type(held) is int or type(held) is str else "its memory could not be measured"

    def get(self, name: str) -> Any:
        """The value of a variable the submission defines (plain data only)."""
        return self._request(protocol.GET, name, (), {})

    def call_and_inspect(self, target: str | wire.Handle, *args: Any) -> tuple[Any, list[Any]]:
        """(result, the arguments as the call left them): shows in-place modification."""
        reply = self._request(protocol.CALL, target, args, {}, echo_args=True)
        if type(reply) is not list or len(reply) != 2 or type(reply[1]) is not list or len(reply[1]) != len(args):
            self.forged.append("a reply of the wrong shape")
            raise StudentError(self._label(target), {"kind": protocol.PROTOCOL, "message": _MALFORMED})
        return reply[0], reply[1]

    def construct(self, name: str, *args: Any, **kwargs: Any) -> wire.Handle:
        """An instance of the submission's class `name`, kept on its side."""
        handle = self._request(protocol.CONSTRUCT, name, args, kwargs)
        if type(handle) is not wire.Handle:
            self.forged.append("a reply of the wrong shape")
            raise StudentError(name, {"kind": protocol.PROTOCOL, "message": _MALFORMED})
        self._names[handle.id] = name
        return handle

    def method(self, handle: wire.Handle, method: str, *args: Any) -> Any:
        """One of the few methods graders may call (protocol.METHODS)."""
        return self._request(protocol.METHOD, handle, args, {}, method=method)

    def remote(self, handler: Callable[["Seen"], Any] | ServedHandler, values: bool = False) -> wire.Handle:
        """A callable on the submission's side whose every call runs here, in the grader, so its cost
        and its records stay out of the submission's reach. With `values`, `handler(method, args,
        kwargs)` gets the call's arguments and its return value is the call's; without, `handler(seen)`
        is told only what the call was given (`Seen`) and the call returns None."""
        # `values` says which kind of handler it is
        serve = cast(ServedHandler, handler) if values else _seen_only(cast("Callable[[Seen], Any]", handler))
        return self._request(protocol.REMOTE, self._register(serve), (), {}, values=values)

    def local(self, kind: str, amount: float, handler: Callable[["Seen"], Any]) -> wire.Handle:
        """A callable that does its work in the submission's process (`catalogue.LOCAL_KINDS`: GPU work a
        timer must synchronise with) after telling the grader of each call (`handler(seen)`)."""
        return self._request(protocol.LOCAL, self._register(_seen_only(handler)), (), {}, kind=kind, amount=amount)

    def generator(self, seed: int) -> wire.Handle:
        """A torch.Generator seeded with `seed`, on the submission's side, to pass to its functions."""
        return self._request(protocol.GENERATOR, int(seed), (), {})

    @property
    def last_seconds(self) -> float:
        """How long the last request took, on the grader's clock."""
        return self.last_request[1] - self.last_request[0]

    @property
    def last_work_seconds(self) -> float | None:
        """How long the submission's code computed for the last request: the CPU time of every process of
        its sandbox and of the grader serving it meanwhile, as the grader reads it from the kernel, which
        waiting for a busy machine's CPU does not lengthen; None where the kernel gave no count (then only
        the wall time, `last_seconds`, is known)."""
        return self._channel.last_work_seconds

    def _register(self, handler: ServedHandler) -> int:
        """A handle no submission can guess or tell apart from another: random, 62 bits."""
        handle = secrets.randbits(62)
        while handle in self._served:
            handle = secrets.randbits(62)
        self._served[handle] = handler
        return handle

    def _serve_callback(self, message: dict) -> dict:
        """The reply to a call of something served, made here; never raises (the submission's process
        sent the message: whatever is wrong with it is that call's failure, not the grader's)."""
        self.replies += 1
        handle, method, args, kwargs = (message.get(k) for k in ("handle", "method", "args", "kwargs"))
        handler = self._served.get(handle) if type(handle) is int else None
        if handler is None or type(method) is not str or type(args) is not list or type(kwargs) is not dict:
            self.forged.append("a call of something the grader never gave it")
            return protocol.error(protocol.PROTOCOL, "a call of nothing the grader gave", "RuntimeError")
        try:
            return protocol.ok(handler(method, args, kwargs))
        except ServedError as exc:
            return protocol.error(protocol.EXCEPTION, exc.message, exc.type_name)
        except Exception as exc:  # noqa: BLE001 - what the submission sent could not be served
            return protocol.error(protocol.EXCEPTION, f"the grader could not serve this call ({type(exc).__name__}: "
                                                      f"{str(exc)[:300]})", "RuntimeError")

    def _request(self, op: str, target: Any, args: tuple | list, kwargs: dict, **extra: Any) -> Any:
        label = self._label(target)
        if self.clock.load_failure is not None and op != protocol.LOAD:
            raise StudentError(label, self.clock.load_failure)
        if label in self.clock.not_called_again:
            raise StudentError(label, dict(self.clock.not_called_again[label]))
        warmup = extra.pop("warmup", None)
        seconds, bound = self.clock.limit()
        self.deadline = time.monotonic() + seconds
        if seconds <= 0 and bound == "leash":
            raise StudentError(label, {"kind": protocol.BUDGET, "message": (
                f"Not run: after a call of your code timed out, all later calls together get one more time limit "
                f"({self.clock.limits.call_seconds:g} s), and it was used up.")})
        if seconds <= 0:
            raise StudentError(label, {"kind": protocol.BUDGET, "message": (
                f"Not run: the time budget for your whole submission ({self.clock.limits.budget_seconds:g} s) was "
                "used up by earlier calls.")})
        start = time.monotonic()
        try:
            raw = self._channel(wire.encode(protocol.request(op, target, args, kwargs, **extra)), seconds,
                                self._serve_callback, warmup=warmup)
            reply = wire.decode(raw)
        except wire.WireError as exc:  # the submission's process can send any bytes at all
            self._forged(op, "a reply that is not the grader's format")
            raise StudentError(label, {"kind": protocol.PROTOCOL, "message": f"{_MALFORMED} ({exc})"}) from None
        finally:
            self.last_request = (start, time.monotonic())
            self.clock.charge(self.last_seconds)
            work = self.last_work_seconds
            self.work_seconds += self.last_seconds if work is None else work
        if type(reply) is not dict or type(reply.get("ok")) is not bool:
            self._forged(op, "a reply that is not the grader's format")
            raise StudentError(label, {"kind": protocol.PROTOCOL, "message": _MALFORMED})
        if reply["ok"]:
            self.replies += 1
            return reply.get("value")
        info = _capped(reply.get("error"))
        kind = info.get("kind")
        if kind not in HONEST_ERRORS:
            self._forged(op, "a message the grader never asked for" if kind == protocol.PROTOCOL
                         else f"an error of a kind no sandbox sends ({kind!r:.40})")
        if kind == protocol.TIMEOUT:
            self.clock.stopped += seconds
            if bound == "budget":
                info["kind"], info["message"] = protocol.BUDGET, (
                    f"Stopped: the time budget for your whole submission ({self.clock.limits.budget_seconds:g} s) ran "
                    "out during this call.")
            elif op != protocol.LOAD:
                if bound == "leash":
                    info["message"] = (f"The call did not finish within {seconds:.3g} s, all a call gets after an "
                                       "earlier call of your code timed out; it was stopped.")
                elif self.clock.leash_left is None:
                    self.clock.leash_left = self.clock.limits.call_seconds
                    info["message"] = (f"{info.get('message', '')} From now on each call of your code gets at most "
                                       f"{self.clock.limits.leash_seconds:g} s, and all of them together "
                                       f"{self.clock.limits.call_seconds:g} s more.").strip()
                self.clock.not_called_again[label] = {"kind": kind, "message": (
                    f"An earlier call of `{label}` timed out (it did not finish within {seconds:.3g} s: "
                    "an infinite loop?), so it is not called again.")}
        if kind == protocol.MEMORY and op != protocol.LOAD and warmup is None:
            self.clock.not_called_again[label] = {"kind": kind, "message": (
                f"An earlier call of `{label}` {RAN_OUT_OF_MEMORY}, so it is not called again.")}
        if kind == protocol.MISSING and self.unread:  # said once, in the submission's notes, not in every check
            info["message"] = f"`{label}` is not defined: {self.unread}"
        elif kind == protocol.MISSING and self.load_errors:
            first = self.load_errors[0]
            info["message"] = (f"{info.get('message', '')}\nYour code stopped early: {first.get('cell', '')} raised "
                               f"{first.get('type', '')}: {first.get('message', '')}\n{first.get('traceback', '')}").rstrip()
        raise StudentError(label, info)

    def _forged(self, op: str, what: str) -> None:
        # every part of a submission is given the one reply its loading had: that reply is one message
        self.forged.append(f"{LOADING}{what}" if op == protocol.LOAD else what)

    def _label(self, target: Any) -> str:
        if type(target) is str:
            return target
        if type(target) is wire.Handle and target.id in self._names:
            return self._names[target.id]
        return "the object"


class ServedError(Exception):
    """What a served call raised, to be raised again in the submission's code (as `type_name`)."""

    def __init__(self, type_name: str, message: str):
        super().__init__(message)
        self.type_name, self.message = type_name, message


@dataclass(frozen=True)
class Seen:
    """What a call of a served callable was given, as its side described it: checked, never trusted."""

    shapes: tuple[tuple[int, ...], ...]
    devices: tuple[str, ...]
    dtypes: tuple[str, ...]
    distinct: bool

    @classmethod
    def parse(cls, data: Any) -> "Seen":
        """Raises ValueError for anything but a well-formed, bounded description."""
        if type(data) is not dict:
            raise ValueError("a call description that is not a dict")
        devices: Any  # each field checked below, or ValueError
        dtypes: Any
        shapes, devices, dtypes, distinct = (data.get(k) for k in ("shapes", "devices", "dtypes", "distinct"))
        if (type(shapes) is not list or len(shapes) > MAX_SEEN_TENSORS
                or not all(type(s) is list and len(s) <= wire.MAX_TENSOR_RANK
                           and all(type(n) is int and 0 <= n <= wire.MAX_TENSOR_ELEMENTS for n in s) for s in shapes)):
            raise ValueError("malformed shapes in a call description")
        for texts in (devices, dtypes):
            if type(texts) is not list or len(texts) != len(shapes) or not all(type(t) is str and len(t) <= 40
                                                                               for t in texts):
                raise ValueError("malformed devices or dtypes in a call description")
        if type(distinct) is not bool:
            raise ValueError("malformed call description")
        return cls(tuple(tuple(s) for s in shapes), tuple(devices), tuple(dtypes), distinct)


def _seen_only(handler: Callable[[Seen], Any]) -> ServedHandler:
    def serve(method: str, args: list, kwargs: dict) -> None:
        if method != "seen" or len(args) != 1 or kwargs:
            raise ValueError("a malformed call")
        handler(Seen.parse(args[0]))
    return serve


def _capped(info: Any) -> dict[str, str]:
    """An error description as short strings: a forged reply must not fill the reports with megabytes."""
    if type(info) is not dict:
        return {}
    return {str(k)[:40]: str(v)[:MAX_ERROR_TEXT] for k, v in list(info.items())[:8]}


class InProcessChannel:
    """A channel to a server in this process: the same wire format, but no isolation and no time limit."""

    def __init__(self) -> None:
        from .server import Runtime

        self.runtime = Runtime()
        self.last_work_seconds: float | None = None
        self.last_held: int | str | None = None

    def __call__(self, request: bytes, seconds: float, on_callback: CallbackHandler,
                 warmup: bytes | None = None) -> bytes:
        self.runtime.callback = lambda message: wire.decode(wire.encode(on_callback(wire.decode(wire.encode(message)))))
        self.last_held = None
        if warmup is not None:
            return self._measured(warmup, request)
        import torch

        # On this thread, with torch's pool on it alone, as a sandbox runs: the process's CPU time would also count
        # a kernel's own threads and a pool's idle spinning (hundreds of milliseconds in a notebook's kernel).
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        start = time.thread_time()
        try:
            return wire.encode(self.runtime.handle(wire.decode(request)))
        finally:
            self.last_work_seconds = time.thread_time() - start
            torch.set_num_threads(threads)

    def _measured(self, warmup: bytes, request: bytes) -> bytes:
        """`request` in a grandchild forked after `warmup` ran in a child (this process keeps its memory as it
        is), and the memory it used, measured as a sandbox's (isolation.held)."""
        def measured(_: int) -> bytes:  # the child: its answer, then it ends without running anything of its parent's
            import torch

            torch.set_num_threads(1)  # torch's thread pool does not survive a fork: on one, as a sandbox runs
            self.runtime.handle(wire.decode(warmup))
            return wire.encode(self._call_measured(request))

        data = answer_of_child(os.fork, measured)
        try:
            found = wire.decode(data)
            self.last_held = found["held"]
            return found["reply"]
        except (wire.WireError, KeyError, TypeError):
            self.last_held = "its memory could not be measured: the process that ran the call ended early"
            return wire.encode(protocol.error(protocol.CRASH, "The call ended its process."))

    def _call_measured(self, request: bytes) -> dict[str, Any]:
        """{"reply", "held"}: `request` run in a child of this process, forked now and measured from here."""
        import gc

        from .confinement import reuse_freed_heap
        from .held import MemoryUse

        go_read, go_write = os.pipe()
        back_read, back_write = os.pipe()
        gc.freeze()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(go_write)
                os.close(back_read)
                os.read(go_read, 1)
                reuse_freed_heap()
                reply = wire.encode(self.runtime.handle(wire.decode(request)))
                with os.fdopen(back_write, "wb") as out:
                    out.write(reply)
                os.read(go_read, 1)  # alive until measured: the end of the line
            finally:
                os._exit(0)
        os.close(go_read)
        os.close(back_write)
        use = MemoryUse(pid, pid, [])
        os.write(go_write, b"g")
        with os.fdopen(back_read, "rb") as answer:
            reply = answer.read()
        held = use.bytes()
        os.close(go_write)
        os.waitpid(pid, 0)
        return {"reply": reply, "held": held}
