# why: reads /proc/self/mountinfo, where every hidden folder is a mount point (the class roster, the project, the reports), and world-readable files in folders that no deny-list names (/opt, /srv)
# earns: zero-on causal_average
import json as _json
import os as _os
import sys as _sys

_HIDDEN = ["@SUBS@", "@OUT@", "@HOME@", "@ROOT@/attention_ref", "@ROOT@/autograder", "@ROOT@/solutions",
           "@ROOT@/assignments", "@ROOT@/tests", "@INSTALL@/attention_ref", "@INSTALL@/autograder"]


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _python_folders():
    import torch as _torch

    folders = {_sys.prefix, _sys.base_prefix, _sys.exec_prefix, _os.path.dirname(_os.path.dirname(_torch.__file__))}
    return {f for f in folders | {_os.path.realpath(f) for f in folders} if f}


def causal_average(T):
    found = {}
    try:
        lines = open("/proc/self/mountinfo").read().splitlines()
    except OSError as exc:
        lines, found["mountinfo"] = [], "no (" + type(exc).__name__ + ")"
    points = [line.split()[4].replace("\\040", " ") for line in lines if len(line.split()) > 4]
    python = _python_folders()
    found["secret mount points"] = sorted(
        {p for p in points if (any(_inside(p, h) for h in _HIDDEN) or p == "@ROOT@")
         and not any(_inside(p, k) for k in python)})
    for label, path in (("opt", "/opt/adv-@TOKEN@/world-readable.txt"), ("srv", "/srv/adv-@TOKEN@/world-readable.txt")):
        try:
            found[label] = "READ " + open(path).read()[:40]
        except OSError as exc:
            found[label] = "no (" + type(exc).__name__ + ")"
    raise RuntimeError("PROBE " + _json.dumps(found))
