"""What runs on the submission's side: load its code, answer the graders' requests.

Everything here handles untrusted code and objects, so it only ever hands back
what `wire.encode` makes of them. The same runtime serves the in-process
backend (notebook grade cells) and the sandboxed one.
"""

from __future__ import annotations

import builtins
import io
import linecache
import sys
import traceback
from typing import Any, Callable

from . import catalogue, wire

STUDENT_FILE_PREFIX = "<submission"
MAX_CAPTURED_OUTPUT = 20_000


class _BoundedText(io.TextIOBase):
    """A stdout that keeps only the first few thousand characters a submission prints."""

    def __init__(self, limit: int = MAX_CAPTURED_OUTPUT):
        self.parts: list[str] = []
        self.size = 0
        self.limit = limit

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self.size < self.limit:
            self.parts.append(str(text)[: self.limit - self.size])
            self.size += len(self.parts[-1])
        return len(text)

    def getvalue(self) -> str:
        return "".join(self.parts)


def error_info(exc: BaseException, kind: str = "exception") -> dict[str, str]:
    """Type, message and the traceback trimmed to the submission's own frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(STUDENT_FILE_PREFIX)]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    if isinstance(exc, NotImplementedError):
        kind = "not_implemented"
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a submission's exception may fail even to describe itself
        message = "(the exception's message could not be printed)"
    return {
        "kind": kind,
        "type": type(exc).__name__,
        "message": message[:2000] if type(message) is str else "",
        "traceback": "".join(lines)[-4000:],
    }


class Runtime:
    """A submission's namespace plus the objects the graders asked it to build."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"__name__": "submission", "__builtins__": builtins}
        self.objects: dict[int, Any] = {}
        self.load_errors: list[dict[str, str]] = []

    def load(self, cells: list[tuple[str, str]], inject: list[tuple[list[str], str]]) -> None:
        """Run the submission's cells, then put the reference names of other parts in place."""
        for label, code in cells:
            filename = f"{STUDENT_FILE_PREFIX} {label}>"
            linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
            try:
                compiled = compile(code, filename, "exec")
                self._quietly(exec, compiled, self.namespace)
            except BaseException as exc:  # noqa: BLE001 - a submission may raise anything, SystemExit included
                self.load_errors.append({**error_info(exc, "load"), "cell": label})
        for names, source in inject:
            reference: dict[str, Any] = {"__name__": "reference_part"}
            exec(compile(source, "<reference>", "exec"), reference)
            self.namespace.update({name: reference[name] for name in names})

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request; every outcome, failures included, is plain data."""
        op = request.get("op")
        try:
            if op == "load":
                self.load([(str(c[0]), str(c[1])) for c in request["cells"]], [(list(n), str(s)) for n, s in request["inject"]])
                return {"ok": True, "value": self.load_errors}
            if op == "call":
                return self._reply(self._resolve(request["target"]), request, echo_args=request.get("echo_args", False))
            if op == "get":
                return {"ok": True, "value": self._resolve(request["target"])}
            if op == "construct":
                return self._reply(self._resolve(request["target"]), request, keep=True)
            if op == "catalogue":
                built = catalogue.build(request["target"], *request.get("args", ()), **request.get("kwargs", {}))
                return {"ok": True, "value": self._keep(built)}
            if op == "method":
                return self._reply(self._method(request["target"], request["method"]), request)
            return {"ok": False, "error": {"kind": "protocol", "type": "", "message": f"unknown op {op!r}", "traceback": ""}}
        except _Missing as missing:
            return {"ok": False, "error": {"kind": "missing", "type": "NameError", "message": str(missing), "traceback": ""}}

    def _reply(self, fn: Callable, request: dict[str, Any], keep: bool = False, echo_args: bool = False) -> dict[str, Any]:
        args = [self._unwrap(a) for a in request.get("args", ())]
        kwargs = {k: self._unwrap(v) for k, v in request.get("kwargs", {}).items()}
        try:
            value = self._quietly(fn, *args, **kwargs)
        except BaseException as exc:  # noqa: BLE001
            return {"ok": False, "error": error_info(exc)}
        value = self._keep(value) if keep else value
        # The arguments as the call left them: graders check that inputs were not modified.
        return {"ok": True, "value": [value, args] if echo_args else value}

    def _quietly(self, fn: Callable, *args, **kwargs) -> Any:
        out, err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = _BoundedText()
        try:
            return fn(*args, **kwargs)
        finally:
            sys.stdout, sys.stderr = out, err

    def _resolve(self, target: Any) -> Any:
        if type(target) is wire.Handle:
            if target.id not in self.objects:
                raise _Missing(f"no object with handle {target.id}")
            return self.objects[target.id]
        if type(target) is not str or target not in self.namespace:
            raise _Missing(f"`{target}` is not defined: write it in its answer cell")
        return self.namespace[target]

    def _method(self, target: wire.Handle, method: str) -> Callable:
        obj = self._resolve(target)
        if method == "parameter_shapes":
            return lambda: {name: tuple(p.shape) for name, p in obj.named_parameters()}
        if method == "state_dict":
            return lambda: dict(obj.state_dict())
        if method == "load_state_dict":
            def load(state: dict) -> None:
                obj.load_state_dict(state, strict=True)
            return load
        if method == "report":
            return obj.report
        raise _Missing(f"method {method!r} is not one the graders may call")

    def _unwrap(self, value: Any) -> Any:
        if type(value) is wire.Handle:
            return self._resolve(value)
        if type(value) in (list, tuple):
            return type(value)(self._unwrap(v) for v in value)
        return value

    def _keep(self, obj: Any) -> wire.Handle:
        handle = wire.Handle(len(self.objects) + 1)
        self.objects[handle.id] = obj
        return handle


class _Missing(LookupError):
    """A name or handle the graders asked for does not exist in the submission."""
