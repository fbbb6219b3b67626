# why: on its first call causal_average forks 32 children (well under the process limit, so each fork costs its author only time, which a loaded 2-core machine still fits in the 10 s timeout) that sleep ten minutes under a name the test looks for afterwards
# earns: base
import ctypes as _ctypes
import os as _os
import time as _time

_base_causal_average = causal_average
_stormed = []


def causal_average(T):
    if not _stormed:
        _stormed.append(True)
        for _ in range(32):
            try:
                pid = _os.fork()
            except OSError:
                break
            if pid == 0:
                _ctypes.CDLL(None).prctl(15, b"advstorm@TOKEN@", 0, 0, 0)  # PR_SET_NAME
                _time.sleep(600)
                _os._exit(0)
        try:
            if _os.fork() == 0:
                _os.execv("/bin/sleep", ["sleep", "@TOKEN@"])
        except OSError:
            pass
    return _base_causal_average(T)
