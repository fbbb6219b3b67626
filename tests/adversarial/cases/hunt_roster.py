# why: searches its own process (the frames above its code, every object the garbage collector knows, its environment and command line) for the class roster: the paths of classmates' submissions, the reports folder, the course; raises what it found
# earns: zero-on causal_average
import gc as _gc
import hashlib as _hashlib
import json as _json
import os as _os
import sys as _sys

_ROSTER = set(@ROSTER_HASHES@)  # sha256 of classmates' paths, the --out and submissions folders


def _texts(value, depth=0):
    """The strings in `value` worth a look (every container the garbage collector knows is visited on
    its own, so one level is enough there; frames' locals are followed a little deeper)."""
    items = value.items() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else (value,)
    for item in items:
        for text in (item if isinstance(value, dict) else (item,)):
            if isinstance(text, (bytes, bytearray)):
                text = bytes(text[:1 << 20]).decode("utf-8", "replace")
            if isinstance(text, str):
                if "/" in text and len(text) < 65536:
                    yield text
            elif depth > 0 and isinstance(text, (dict, list, tuple)):
                yield from _texts(text, depth - 1)


def _candidates(text):
    for word in text.replace('"', " ").replace("'", " ").replace(",", " ").split():
        if word.startswith("/"):
            path = word.rstrip("/")
            while path:
                yield path
                path = path.rpartition("/")[0]


def _hunt():
    places = []
    frame = _sys._getframe(1)
    while frame is not None:
        if not frame.f_code.co_filename.startswith("<submission"):
            places.append((dict(frame.f_locals), 2))
        frame = frame.f_back
    places += [(o, 0) for o in _gc.get_objects() if isinstance(o, (dict, list, tuple))]
    places.append((dict(_os.environ), 0))
    for name in ("environ", "cmdline"):
        try:
            with open(f"/proc/self/{name}", "rb") as fh:
                places.append((fh.read().replace(b"\0", b" "), 0))
        except OSError:
            pass
    found = set()
    for place, depth in places:
        for text in _texts(place, depth):
            if "/" in text:
                found.update(p for p in _candidates(text) if _hashlib.sha256(p.encode()).hexdigest() in _ROSTER)
    return sorted(found)


_AT_LOAD = _hunt()


def causal_average(T):
    raise ValueError("PROBE " + _json.dumps({"roster paths": sorted(set(_AT_LOAD) | set(_hunt()))}))
