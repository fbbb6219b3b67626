# why: 50 MB on stdout via print, os.write(1, ...) and stderr, at import and in a correct causal_mask
# earns: base
import os as _os
import sys as _sys

print("x" * 50_000_000)
_os.write(1, b"y" * 50_000_000)
_os.write(2, b"z" * 10_000_000)
_base_causal_mask = causal_mask


def causal_mask(T_q, T_k=None, *, device=None):
    print("x" * 50_000_000)
    _sys.stderr.write("e" * 10_000_000)
    _os.write(1, b"y" * 50_000_000)
    return _base_causal_mask(T_q, T_k, device=device)
