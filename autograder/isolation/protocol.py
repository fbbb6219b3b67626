"""The messages between the grader's proxy (`proxy.Student`) and the submission's server
(`server.Runtime`), named once for both sides.

A request is a dict with an `op`; the reply is `{"ok": True, "value": ...}` or
`{"ok": False, "error": {"kind", "type", "message", "traceback"}}`. While a request
runs, the submission's side may send `callback` messages (a remote workload was
called) and waits for each answer before it sends the reply.
"""

from __future__ import annotations

from typing import Any, Callable

# grader -> submission
LOAD = "load"  # run the submission's cells, then inject the reference names of the other parts
CALL = "call"  # call a name or a kept object; `echo_args` sends the arguments back as the call left them
GET = "get"  # the value of a name
CONSTRUCT = "construct"  # build an instance of a class, kept on the submission's side
METHOD = "method"  # one of METHODS on a kept object
CATALOGUE = "catalogue"  # build a trusted callable of autograder.isolation.catalogue
REMOTE = "remote"  # build a callable whose calls come back to the grader as CALLBACK messages
PROBE = "probe"  # what a fresh sandbox can reach that it must not (see policy.probe)
# submission -> grader, during a request
CALLBACK = "callback"
# a grading process -> the zygote (with a socket passed along): fork a sandbox on it; attach another line
SPAWN, ATTACH = b"spawn", b"attach"

# The only methods a grader may call on a kept module.
METHODS = ("parameter_shapes", "parameters", "load_parameters", "to")

# Error kinds: what went wrong, for the feedback.
EXCEPTION = "exception"  # the submission's code raised
NOT_IMPLEMENTED = "not_implemented"  # ... NotImplementedError: a stub
MISSING = "missing"  # a name or handle that does not exist
LOAD_ERROR = "load"  # a cell raised while the code was loaded
TIMEOUT = "timeout"  # the call overran the per-call limit (or an earlier call of the same name did)
MEMORY = "memory"  # an allocation failed at the sandbox's memory limit (or did in an earlier call of the same name)
RAN_OUT_OF_MEMORY = "ran out of memory (an allocation failed at the sandbox's memory limit)"  # feedback; class report
CRASH = "crash"  # the process died or broke the connection
PROTOCOL = "protocol"  # the process sent something that is not a well-formed reply
BUDGET = "budget"  # the submission's time budget was used up: the call was not made
BREACH = "breach"  # the sandbox could reach the reference, the graders or the secret: grading must stop


CallbackHandler = Callable[[dict], Any]  # serves a CALLBACK message in the grader; returns plain data


class SandboxBreach(Exception):
    """A sandbox reached what it must not (the reference, the graders, the key): stop grading."""


def request(op: str, target: Any = None, args: tuple | list = (), kwargs: dict | None = None, **extra: Any) -> dict:
    return {"op": op, "target": target, "args": list(args), "kwargs": kwargs or {}, **extra}


def ok(value: Any) -> dict:
    return {"ok": True, "value": value}


def error(kind: str, message: str, type: str = "", traceback: str = "") -> dict:  # noqa: A002 - the field's name
    return {"ok": False, "error": {"kind": kind, "type": type, "message": message, "traceback": traceback}}
