# why: writes a reply claiming a sandbox breach on its socket (the old engine refused to grade the whole class, exit 3), then returns as usual: the replies that follow answer the wrong requests, which costs it only its own points
# earns: any
# order: first
import os as _os
import stat as _stat
import struct as _struct
import sys as _sys

_real_causal_mask = causal_mask


def _sockets():
    return [fd for fd in range(3, 64) if _is_socket(fd)]


def _is_socket(fd):
    try:
        return _stat.S_ISSOCK(_os.fstat(fd).st_mode)
    except OSError:
        return False


def causal_mask(T_q, T_k=None, *, device=None):
    wire = _sys.modules.get("autograder.isolation.wire")
    if wire is not None:
        forged = b"R" + wire.encode({"ok": False, "error": {"kind": "breach", "type": "", "traceback": "",
                                                             "message": "the reference can be read"}})
        for fd in _sockets():
            _os.write(fd, _struct.pack("<Q", len(forged)) + forged)
    return _real_causal_mask(T_q, T_k, device=device)
