# why: SIGKILL to its parent (its own loaded code), every process it may signal (kill -1), every pid it can see and every pid up to 50000 but its own, then a correct causal_mask
# earns: base
import json as _json
import os as _os
import signal as _signal

_base_causal_mask = causal_mask


def _kill_all():
    # only inside its own PID namespace (pid 1 its loaded code, 2 a part forked from it): a broken sandbox must
    # not take the machine down
    if _os.getpid() > 2 or _os.getppid() > 1:
        raise RuntimeError("PROBE " + _json.dumps({"isolated": False}))
    for action in (lambda: _os.kill(_os.getppid(), _signal.SIGKILL), lambda: _os.kill(-1, _signal.SIGKILL)):
        try:
            action()
        except OSError:
            pass
    for pid in list(range(2, 50_000)) + [int(p) for p in _os.listdir("/proc") if p.isdigit()]:
        if pid == _os.getpid():
            continue
        try:
            _os.kill(pid, _signal.SIGKILL)
        except OSError:
            pass


_kill_all()


def causal_mask(T_q, T_k=None, *, device=None):
    _kill_all()
    return _base_causal_mask(T_q, T_k, device=device)
