# why: causal_average tries 300 forks under a limit of 64 processes, says how many it got, and leaves them sleeping
# earns: zero-on causal_average
# runner: engine
import ctypes as _ctypes
import json as _json
import os as _os
import time as _time


def causal_average(T):
    forked = 0
    for _ in range(300):
        try:
            pid = _os.fork()
        except OSError:
            break
        if pid == 0:
            _ctypes.CDLL(None).prctl(15, b"advstorm@TOKEN@", 0, 0, 0)  # PR_SET_NAME
            _time.sleep(600)
            _os._exit(0)
        forked += 1
    raise RuntimeError("PROBE " + _json.dumps({"forked": forked}))
