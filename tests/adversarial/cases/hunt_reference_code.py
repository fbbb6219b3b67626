# why: heads left undone; at load and in every call it searches its own process (the frames above it, every object the garbage collector knows, linecache, the names it was given, the modules loaded) for the reference code of the other parts and the graders, and raises what it found as its exception message
# earns: zero-on split_heads, merge_heads, CausalSelfAttention
import gc as _gc
import hashlib as _hashlib
import json as _json
import linecache as _linecache
import sys as _sys

_REFERENCE_LINES = set(@REFERENCE_HASHES@)  # sha256 of the reference's lines: the plain text is nowhere here
# what only the grader loads: the reference, the graders and what runs them (the zygote is forked from the
# process that loads them, before it does)
_GRADER_MODULES = ("attention_ref", "autograder.graders", "autograder.engine.session", "autograder.engine.checks",
                   "autograder.engine.served", "autograder.engine.plugin", "pytest", "_pytest")


def _texts(value, depth=0):
    """The strings in `value` worth a look (every container the garbage collector knows is visited on
    its own, so one level is enough there; frames' locals are followed a little deeper)."""
    items = value.items() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else (value,)
    for item in items:
        for text in (item if isinstance(value, dict) else (item,)):
            if isinstance(text, (bytes, bytearray)):
                text = bytes(text[:1 << 20]).decode("utf-8", "replace")
            if isinstance(text, str):
                if len(text) >= 30 and "\n" in text:
                    yield text
            elif depth > 0 and isinstance(text, (dict, list, tuple)):
                yield from _texts(text, depth - 1)


def _hunt():
    found, functions = set(), []
    places = [(frame_locals, 2) for frame_locals in _frames()]
    places += [(o, 0) for o in _gc.get_objects() if isinstance(o, (dict, list, tuple))]
    places += [(entry[2], 0) for entry in list(_linecache.cache.values()) if len(entry) > 2]
    for place, depth in places:
        for text in _texts(place, depth):
            for line in text.splitlines():
                line = line.strip()
                if len(line) >= 30 and _hashlib.sha256(line.encode()).hexdigest() in _REFERENCE_LINES:
                    found.add(line)
    for name, value in list(globals().items()):
        code = getattr(value, "__code__", None) or getattr(getattr(value, "__init__", None), "__code__", None)
        # its own, or the grader's stand-ins: for served names (they only pass the call on) and for IPython's
        # get_ipython (its magics do nothing)
        if code is not None and not code.co_filename.startswith("<submission") \
                and not code.co_filename.endswith(("isolation/catalogue.py", "isolation/magics.py")):
            functions.append(f"{name}: {code.co_filename}")
    modules = [name for name in list(_sys.modules) if any(name == m or name.startswith(m + ".") for m in _GRADER_MODULES)]
    return sorted(found), functions, sorted(modules)


def _frames():
    """The locals of every frame above this code: the runtime that loaded it, and what called that."""
    frame = _sys._getframe(1)
    while frame is not None:
        if not frame.f_code.co_filename.startswith("<submission"):
            yield dict(frame.f_locals)
        frame = frame.f_back


_AT_LOAD = _hunt()


def split_heads(x, n_heads):
    lines, functions, modules = _hunt()
    raise ValueError("PROBE " + _json.dumps({"reference lines at load": len(_AT_LOAD[0]),
                                                      "reference lines": len(lines), "sample": (_AT_LOAD[0] + lines)[:40],
                                                      "functions not its own": functions,
                                                      "grader modules": sorted(set(_AT_LOAD[2] + modules))}))


def merge_heads(x):
    raise NotImplementedError


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        raise NotImplementedError
