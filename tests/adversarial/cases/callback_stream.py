# why: causal_average starts a thread that keeps callback frames queued on its socket (and one that reads the grader's answers), then loops: the old engine went on serving the queue after the call's deadline (6.5 s for a 2-s limit here; for ever where the queue never ran dry), holding its CPU slot
# earns: zero-on causal_average
# runner: engine
# within: 2.5
# feedback: did not finish
import os as _os
import stat as _stat
import struct as _struct
import sys as _sys
import threading as _threading


def _flood(fd, frame):
    try:
        while True:
            _os.write(fd, frame)
    except OSError:
        pass


def _drain(fd):
    try:
        while _os.read(fd, 1 << 16):
            pass
    except OSError:
        pass


def causal_average(T):
    wire = _sys.modules.get("autograder.isolation.wire")
    if wire is not None:
        body = b"C" + wire.encode({"op": "callback", "handle": 1, "method": "call", "args": [], "kwargs": {}})
        frame = (_struct.pack("<Q", len(body)) + body) * 64  # a write keeps many frames queued
        for fd in range(3, 64):
            try:
                if _stat.S_ISSOCK(_os.fstat(fd).st_mode):
                    _threading.Thread(target=_flood, args=(fd, frame), daemon=True).start()
                    _threading.Thread(target=_drain, args=(fd,), daemon=True).start()
            except OSError:
                pass
    while True:
        pass
