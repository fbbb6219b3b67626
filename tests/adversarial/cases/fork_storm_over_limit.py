# why: causal_average starts 300 processes (cheap spawns of `sleep`) under a limit of 64, says how many it got, and leaves them sleeping
# earns: zero-on causal_average
# runner: engine
import json as _json
import os as _os


def causal_average(T):
    started = 0
    for _ in range(300):
        try:
            _os.posix_spawn("/bin/sleep", ["sleep", "@TOKEN@"], {})
        except OSError:
            break
        started += 1
    raise RuntimeError("PROBE " + _json.dumps({"forked": started}))
