# why: writes forged frames straight to the grader's socket (deep nesting, a lone surrogate, a bad device, a 2**62-byte length, 5 MB of error) and replaces the runtime's encoder; the replies that follow answer the wrong requests, which costs it only its own points
# earns: any
import json as _json
import os as _os
import stat as _stat
import struct as _struct


def _socket_fds():
    return [fd for fd in range(3, 64) if _is_socket(fd)]


def _is_socket(fd):
    try:
        return _stat.S_ISSOCK(_os.fstat(fd).st_mode)
    except OSError:
        return False


def _frame(header, buffers=()):
    head = header.encode() if isinstance(header, str) else header
    body = _struct.pack("<II", len(head), len(buffers)) + head
    body += b"".join(_struct.pack("<Q", len(b)) + b for b in buffers)
    return _struct.pack("<Q", len(body)) + body


_FORGERIES = [
    _frame("[" * 100_000 + "]" * 100_000),
    _frame(_json.dumps({"dict": {"ok": True, "value": {"str": "\ud800 full marks"}}})),
    _frame(_json.dumps({"dict": {"ok": True, "value": {"tensor": ["float32", [2], 0, "cuda:7"]}}}), [b"\0" * 8]),
    _frame(_json.dumps({"dict": {"ok": True, "value": {"device": "meta"}}})),
    _frame(_json.dumps({"dict": {"ok": True, "value": {"float": "one"}}})),
    _frame(_json.dumps({"dict": {"ok": False, "error": {"dict": {"kind": {"str": "timeout"}, "message": {"str": "m" * 5_000_000}}}}})),
]


def causal_mask(T_q, T_k=None, *, device=None):
    for fd in _socket_fds():
        for forged in _FORGERIES:
            _os.write(fd, forged)
    return torch.tril(torch.ones(T_q, T_q if T_k is None else T_k, dtype=torch.bool, device=device))


def padding_mask(lengths, T):
    for fd in _socket_fds():
        _os.write(fd, _struct.pack("<Q", 2**62))
    return torch.arange(T, device=lengths.device)[None, :] < lengths[:, None]


def apply_mask(scores, mask):
    import sys
    sys.modules["autograder.wire"].encode = lambda value: b"\xff" * 64
    return scores.masked_fill(~mask, float("-inf"))
