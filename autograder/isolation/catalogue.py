"""The callables a submission's code is given, built on its side: every one stands for something the
grader serves, and none of them carries anything worth reading.

A grader passes functions to a submission (the workload `time_call` times, the function
`is_permutation_equivariant` tests) and, while one part is graded, the names of the other parts
(the reference versions, so that one mistake costs points once). The submission never receives
their code: each is a `Served` callable whose calls go back to the grader over the sandbox's
socket, with a handle the grader chose at random, a neutral name and no docstring, so that
neither its attributes nor its type tell one apart from another. Only the work that must run in
the submission's own process (on its GPU, where its timer has to synchronise) runs here, after the
grader has been told of the call (`LocalWork`).

A stand-in for another part's name never refuses a call that the student's own function of that name
accepts (SPEC: a graded function may take more optional arguments than its signature, and the student's
functions may call each other with them). It knows SPEC's signature of the name (the grader sends it): a
call that signature accepts is served; one it refuses (`is_causal=True` to a `scaled_dot_product_attention`
of the student's own that takes it) goes to the student's own function, where there is one.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable

import torch

# handle, method ("call", "new", "seen"), args, kwargs -> the grader's answer (raises what it raised)
CallBack = Callable[[int, str, tuple, dict], Any]
NEUTRAL_NAME = "fn"


def describe(args: tuple) -> dict[str, Any]:
    """What a call was given, without the values: its tensors' shapes, devices and dtypes."""
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    return {"shapes": [list(t.shape) for t in tensors], "devices": [str(t.device) for t in tensors],
            "dtypes": [str(t.dtype).removeprefix("torch.") for t in tensors],
            "distinct": len({t.data_ptr() for t in tensors}) == len(tensors)}


# The kinds of parameter a signature sent by the grader may name (inspect.Parameter's).
PARAMETER_KINDS = {kind.name: kind for kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.KEYWORD_ONLY,
                                                inspect.Parameter.VAR_KEYWORD)}


def signature(parameters: list) -> inspect.Signature:
    """A served name's signature from the grader's description (engine.served.spec_parameters)."""
    return inspect.Signature([inspect.Parameter(str(name), PARAMETER_KINDS[str(kind)],
                                                default=None if has_default else inspect.Parameter.empty)
                              for name, kind, has_default in parameters])


def _beyond(spec: inspect.Signature | None, args: tuple, kwargs: dict) -> bool:
    """Whether a call uses arguments that `spec` lacks (a call `spec` refuses)."""
    if spec is None:
        return False
    try:
        spec.bind(*args, **kwargs)
    except TypeError:
        return True
    return False


class Served:
    """A function the grader serves: with `values`, each call's arguments go to the grader and its
    answer comes back; without, the grader is told only what the call was given (shapes, devices).
    A call that `spec` (SPEC's signature) refuses goes to `own`, the submission's function of that name."""

    __slots__ = ("_handle", "_call_back", "_values", "_own", "_spec")
    __name__ = NEUTRAL_NAME
    __module__ = "builtins"
    __doc__ = None

    def __init__(self, handle: int, call_back: CallBack, values: bool, own: Callable | None = None,
                 spec: inspect.Signature | None = None) -> None:
        self._handle, self._call_back, self._values = handle, call_back, values
        self._own, self._spec = own, spec

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._own is not None and _beyond(self._spec, args, kwargs):
            return self._own(*args, **kwargs)
        if self._values:
            return self._call_back(self._handle, "call", args, kwargs)
        self._call_back(self._handle, "seen", (describe(args),), {})
        return None

    def __repr__(self) -> str:
        return f"<function {NEUTRAL_NAME}>"

    def __getattr__(self, name: str) -> str:
        if name == "__qualname__":  # a class body's __qualname__ names the class, not its instances
            return NEUTRAL_NAME
        raise AttributeError(name)


def served_class(name: str, handle: int, call_back: CallBack, own: Callable | None = None,
                 spec: inspect.Signature | None = None) -> type:
    """A class whose instances live in the grader: constructing one and calling it are served calls. A
    construction that `spec` refuses builds the submission's own class (`own`) instead."""

    def __new__(cls: type, *args: Any, **kwargs: Any) -> Any:
        if own is not None and _beyond(spec, args, kwargs):
            return own(*args, **kwargs)  # not an instance of `cls`: Python does not call its __init__
        return object.__new__(cls)

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        self._instance = call_back(handle, "new", args, kwargs)

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        return call_back(handle, "call", (self._instance, *args), kwargs)

    return type(name, (), {"__new__": __new__, "__init__": __init__, "__call__": __call__, "forward": __call__,
                           "__doc__": None, "__module__": "builtins"})


class LocalWork:
    """Work that must run here, in the submission's process (GPU work that only a synchronised timer
    sees): the grader is told of each call first, so what it counts and clocks is its own."""

    __slots__ = ("_handle", "_call_back", "_work")
    __name__ = NEUTRAL_NAME
    __module__ = "builtins"
    __doc__ = None

    def __init__(self, handle: int, call_back: CallBack, kind: str, amount: float) -> None:
        self._handle, self._call_back = handle, call_back
        self._work = _KINDS[kind](amount)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._call_back(self._handle, "seen", (describe(args),), {})
        return self._work(*args)

    def __repr__(self) -> str:
        return f"<function {NEUTRAL_NAME}>"

    def __getattr__(self, name: str) -> str:
        if name == "__qualname__":
            return NEUTRAL_NAME
        raise AttributeError(name)


def _gpu_sleep(seconds: float) -> Callable[..., None]:
    """Queues `seconds` of GPU work and returns at once."""
    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    cycles = int(seconds * getattr(props, "clock_rate", 1_500_000) * 1000.0)
    return lambda *args: torch.cuda._sleep(cycles)


def _attention(_: float) -> Callable[..., torch.Tensor]:
    """softmax(q kᵀ / √d) v with the whole score grid built: the T² workload."""
    def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]), dim=-1) @ v
    return attend


_KINDS: dict[str, Callable[[float], Callable]] = {"gpu_sleep": _gpu_sleep, "attention": _attention}
LOCAL_KINDS = tuple(_KINDS)
