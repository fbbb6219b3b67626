"""The submission's side: load its code as a real module, answer the graders' requests.

Everything here handles untrusted code and objects, so it only ever hands back
what `wire.encode` makes of them. The same server answers in a sandboxed process
and, for nbgrader grade cells, in the grading process itself.
"""

from __future__ import annotations

import __future__
import io
import linecache
import sys
import traceback
import types
from typing import Any, Callable

from . import catalogue, magics, policy, protocol, wire
from ..text import code_lines

STUDENT_FILE_PREFIX = "<submission"
MAX_CAPTURED_OUTPUT = 20_000
CPU_ALLOCATION_FAILED = "can't allocate memory"  # torch's CPU allocator, when the address-space limit refuses it
MODULE_NAME = "submission"  # as `import submission` would name it: `if __name__ == "__main__":` blocks do not run
# What a submission may import besides Python's standard library: what attention code commonly imports
# (pyproject.toml's dependencies install each; a sandbox sees the site folders they live in).
OFFERED_PACKAGES = ("torch", "numpy", "einops", "jaxtyping", "matplotlib")
MAX_MODULE_NAME = 200  # a module name a submission's import gave: shown, so bounded
# The compiler flags a `from __future__ import ...` in one cell passes on to later cells, as IPython does.
FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag

Callback = Callable[[dict], Any]  # sends a CALLBACK message to the grader, returns its reply (ok/error)


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


def error_info(exc: BaseException, kind: str = protocol.EXCEPTION) -> dict[str, str]:
    """Type, message and the traceback trimmed to the submission's own frames."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(STUDENT_FILE_PREFIX)]
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - a submission's exception may fail even to describe itself
        message = "(the exception's message could not be printed)"
    missing = missing_module(exc)
    if missing is not None:
        message = missing_module_message(missing)
    if isinstance(exc, NotImplementedError):
        kind = protocol.NOT_IMPLEMENTED
    elif isinstance(exc, MemoryError) or (isinstance(exc, RuntimeError) and type(message) is str
                                          and CPU_ALLOCATION_FAILED in message):
        kind = protocol.MEMORY  # a forged one only stops the submission's own function being called again
    return {
        "kind": kind,
        "type": type(exc).__name__,
        "message": message[:2000] if type(message) is str else "",
        "traceback": "".join(lines)[-4000:],
    }


def missing_module(exc: BaseException) -> str | None:
    """The module an import could not find, when `exc` is the import system's own ModuleNotFoundError
    naming it (what a student wrote means the package, not Python's "No module named")."""
    name = exc.name if type(exc) is ModuleNotFoundError else None
    return name[:MAX_MODULE_NAME] if type(name) is str and name else None


def missing_module_message(name: str) -> str:
    """One message for an import the grading environment cannot serve: it names the module and what is offered,
    so a student knows it is the environment's limit, not a bug in their attention code."""
    return (f"your code imports `{name}`, which the grading environment does not have; it offers "
            f"{', '.join(OFFERED_PACKAGES)} and Python's standard library")


def run_as_written(model: Any = None, **options: Any) -> Any:
    """torch.compile in a sandbox: the function or module it is given, unchanged. Grading judges what the
    code computes: compiled for real, a first call fails in a sandbox (inductor's precompiled C++ header
    cannot be built there: CppCompileError) and costs seconds of a core outside one, which no check
    measures. torch's own switch (TORCH_COMPILE_DISABLE) still imports the compiler, in every sandbox."""
    return (lambda fn: fn) if model is None else model


def new_module(name: str, filename: str) -> types.ModuleType:
    """An empty module registered in sys.modules, so that code run in it behaves as in an imported
    module (dataclasses, enums, typing.get_type_hints and pickle look classes up there)."""
    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    return module


class Runtime:
    """A submission's module plus the objects the graders asked it to build."""

    def __init__(self, callback: Callback | None = None) -> None:
        self.module = new_module(MODULE_NAME, f"{MODULE_NAME}.py")
        self.namespace: dict[str, Any] = self.module.__dict__
        self.namespace["get_ipython"] = magics.get_ipython  # what the cells' magics and shell commands call
        self.objects: dict[int, Any] = {}
        self.load_errors: list[dict[str, str]] = []
        self.callback = callback

    def load(self, cells: list[tuple[str, str]]) -> None:
        """Run the submission's cells.

        Cells compile with none of this file's compiler flags; a cell's own `from __future__`
        imports carry on to the cells after it, as in a notebook."""
        futures = 0
        for label, code in cells:
            filename = f"{STUDENT_FILE_PREFIX} {label}>"
            # the lines Python numbers (a U+2028 in a comment ends no line), so a traceback quotes the right one
            linecache.cache[filename] = (len(code), None, [line + "\n" for line in code_lines(code)], filename)
            try:
                compiled = compile(code, filename, "exec", flags=futures, dont_inherit=True)
                futures |= compiled.co_flags & FUTURE_FLAGS
                self._quietly(exec, compiled, self.namespace)
            except BaseException as exc:  # noqa: BLE001 - a submission may raise anything, SystemExit included
                self.load_errors.append({**error_info(exc, protocol.LOAD_ERROR), "cell": label})

    def serve(self, served: list[tuple[str, str, int, list | None]]) -> None:
        """Put in place the names the grader serves (the other parts' reference versions), each a
        callable whose calls go back to the grader; a call that the signature it serves refuses goes to
        the submission's own callable of that name, where it has one (catalogue.Served)."""
        for name, kind, handle, parameters in served:
            own = self.namespace.get(name)
            own = own if callable(own) else None
            spec = catalogue.signature(parameters) if parameters is not None else None
            self.namespace[name] = (catalogue.served_class(name, handle, self._call_back, own, spec) if kind == "class"
                                    else catalogue.Served(handle, self._call_back, values=True, own=own, spec=spec))

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request; every outcome, failures included, is plain data."""
        op = request.get("op")
        try:
            if op == protocol.LOAD:
                self.load([(str(c[0]), str(c[1])) for c in request["cells"]])
                return protocol.ok(self.load_errors)
            if op == protocol.SERVE:
                self.serve([(str(n), str(k), int(h), p) for n, k, h, p in request["served"]])
                return protocol.ok(None)
            if op == protocol.CALL:
                return self._reply(self._resolve(request["target"]), request, echo_args=request.get("echo_args", False))
            if op == protocol.GET:
                return protocol.ok(self._resolve(request["target"]))
            if op == protocol.CONSTRUCT:
                return self._reply(self._resolve(request["target"]), request, keep=True)
            if op == protocol.REMOTE:
                return protocol.ok(self._keep(catalogue.Served(int(request["target"]), self._call_back,
                                                               values=bool(request.get("values")))))
            if op == protocol.LOCAL:
                return protocol.ok(self._keep(catalogue.LocalWork(int(request["target"]), self._call_back,
                                                                  str(request["kind"]), float(request["amount"]))))
            if op == protocol.GENERATOR:
                return protocol.ok(self._keep(_generator(int(request["target"]))))
            if op == protocol.METHOD:
                return self._reply(self._method(request["target"], request["method"]), request)
            if op == protocol.PROBE:
                return protocol.ok(policy.probe([list(t) for t in request["targets"]], list(request["modules"])))
            return protocol.error(protocol.PROTOCOL, f"unknown op {op!r}")
        except _Missing as missing:
            return protocol.error(protocol.MISSING, str(missing), "NameError")

    def _call_back(self, handle: int, method: str, args: tuple, kwargs: dict) -> Any:
        """One call of something the grader serves: its answer, or what it raised (as the same
        built-in exception type where it is one, so a submission's `except ValueError` still works)."""
        if self.callback is None:
            raise RuntimeError("no grader to call back")
        reply = self.callback({"op": protocol.CALLBACK, "handle": handle, "method": method, "args": list(args),
                               "kwargs": dict(kwargs)})
        if type(reply) is dict and reply.get("ok") is True:
            return reply.get("value")
        error = found if type(reply) is dict and type(found := reply.get("error")) is dict else {}
        raise SERVED_EXCEPTIONS.get(str(error.get("type")), RuntimeError)(str(error.get("message", "")))

    def _reply(self, fn: Callable, request: dict[str, Any], keep: bool = False, echo_args: bool = False) -> dict[str, Any]:
        args = [self._unwrap(a) for a in request.get("args", ())]
        kwargs = {k: self._unwrap(v) for k, v in request.get("kwargs", {}).items()}
        try:
            value = self._quietly(fn, *args, **kwargs)
        except BaseException as exc:  # noqa: BLE001
            return {"ok": False, "error": error_info(exc)}
        value = self._keep(value) if keep else value
        # The arguments as the call left them: graders check that inputs were not modified.
        return protocol.ok([value, args] if echo_args else value)

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
        if method == "parameters":
            return lambda: {name: p.detach() for name, p in obj.named_parameters()}
        if method == "load_parameters":
            return lambda values: _load_parameters(obj, values)
        if method == "to":
            return lambda device: obj.to(device) and None
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


# What a served call may raise in the submission's code, by the name the grader gave (anything else: RuntimeError).
SERVED_EXCEPTIONS: dict[str, type[Exception]] = {
    e.__name__: e for e in (ValueError, TypeError, IndexError, KeyError, RuntimeError, NotImplementedError,
                            ZeroDivisionError, MemoryError, TimeoutError)}


def _generator(seed: int) -> Any:
    import torch

    return torch.Generator().manual_seed(seed)


def _load_parameters(module: Any, values: dict) -> None:
    """Copy `values` into the module's parameters of the same names. Buffers (a registered causal
    mask, say) are the module's own business and stay as they are; the parameters must match exactly."""
    import torch

    params = dict(module.named_parameters())
    missing, extra = sorted(set(values) - set(params)), sorted(set(params) - set(values))
    if missing or extra:
        raise KeyError(f"parameters missing: {', '.join(missing) or 'none'}; unexpected: {', '.join(extra) or 'none'}")
    with torch.no_grad():
        for name, value in values.items():
            if tuple(params[name].shape) != tuple(value.shape):
                raise ValueError(f"parameter {name} has shape {tuple(params[name].shape)}, not {tuple(value.shape)}")
            params[name].copy_(value)


class _Missing(LookupError):
    """A name or handle the graders asked for does not exist in the submission."""
