"""The messages between the grader's proxy (`proxy.Student`) and the submission's server
(`server.Runtime`), named once for both sides.

A request is a dict with an `op`; the reply is `{"ok": True, "value": ...}` or
`{"ok": False, "error": {"kind", "type", "message", "traceback"}}`. While a request
runs, the submission's side may send `callback` messages (something the grader serves
was called: `{"handle", "method", "args", "kwargs"}`) and waits for each answer, a reply of
the same shape, before it sends its own.

Everything the submission's side sends is data to be checked, never an instruction: no reply
can stop grading or speak for the grader (whether a sandbox can reach what it must not is
decided by the grader's own probe of a fresh sandbox, before any submission code runs).
"""

from __future__ import annotations

from typing import Any, Callable

# grader -> submission
LOAD = "load"  # run the submission's cells (once per submission: parts run in processes forked afterwards)
SERVE = "serve"  # put in place the names the grader serves while a part is graded (the other parts')
FORK = "fork"  # a sandbox forks a process for a part from its loaded state, answering on the socket sent along
KILL = "kill"  # a sandbox ends one of the part processes it forked
CALL = "call"  # call a name or a kept object; `echo_args` sends the arguments back as the call left them
GET = "get"  # the value of a name
CONSTRUCT = "construct"  # build an instance of a class, kept on the submission's side
METHOD = "method"  # one of METHODS on a kept object
REMOTE = "remote"  # build a callable whose calls come back to the grader as CALLBACK messages
LOCAL = "local"  # build a callable that tells the grader of each call, then works here (on the GPU)
GENERATOR = "generator"  # build a torch.Generator with the grader's seed
PROBE = "probe"  # what a fresh sandbox can reach that it must not (see policy.probe); sent before any submission code
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


CallbackHandler = Callable[[dict], dict]  # serves a CALLBACK message in the grader: the reply (ok/error), never raises


class SandboxBreach(Exception):
    """The grader's probe found that a fresh sandbox can reach what it must not (the reference, the
    graders, the key, the secret, the reports): grading is refused."""


def request(op: str, target: Any = None, args: tuple | list = (), kwargs: dict | None = None, **extra: Any) -> dict:
    return {"op": op, "target": target, "args": list(args), "kwargs": kwargs or {}, **extra}


def ok(value: Any) -> dict:
    return {"ok": True, "value": value}


def error(kind: str, message: str, type: str = "", traceback: str = "") -> dict:  # noqa: A002 - the field's name
    return {"ok": False, "error": {"kind": kind, "type": type, "message": message, "traceback": traceback}}
