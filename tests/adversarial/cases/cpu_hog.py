# why: 40 busy processes, each in a session of its own, while the honest submissions' timing studies run beside it (--jobs 2): without a CPU share per sandbox their real T² study times out; score_grid_bytes sleeps until it is stopped, to keep them busy
# earns: at-most base
# run: later
# order: first
import ctypes as _ctypes
import os as _os
import time as _time


def _spin():
    _ctypes.CDLL(None).prctl(15, b"advstorm@TOKEN@", 0, 0, 0)  # PR_SET_NAME: the test finds strays by it
    end = _time.monotonic() + 120  # a bound of its own, should a broken sandbox let it outlive grading
    while _time.monotonic() < end:
        pass


if _os.getpid() == 1:  # only as pid 1 of its own PID namespace, where all of them die with the sandbox
    for _ in range(40):
        try:
            _pid = _os.fork()
        except OSError:
            break
        if _pid == 0:
            try:
                _os.setsid()
                _spin()
            finally:
                _os._exit(0)


def score_grid_bytes(T, *, n_heads=1, batch=1, dtype=torch.float32):
    while True:
        _time.sleep(1000)


def time_attention(attn, Ts, *, d_head=64, device="cpu", repeats=5):
    return [1.0 for _ in Ts]  # its own study would only time out under its own load
