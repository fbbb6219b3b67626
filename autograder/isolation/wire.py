"""The only format in which data crosses between a submission and the graders.

Plain data only: None, bool, int, float, str, bytes, lists, tuples, dicts with
string keys, dense torch tensors, dtypes and devices (subclasses of the Python
types, a NamedTuple or a numpy.float64, and numpy scalars travel as the plain
type). Reading it never runs code
(no pickle): a JSON header describes the structure and raw byte buffers hold
the tensors. Anything else a submission returns arrives as an `Opaque`
description, so a grader can say what came back instead of what was expected.

The grader decodes bytes that a hostile process may have forged (it can replace
its own `encode`), so `decode` treats every byte as untrusted: it raises only
`WireError`, bounds the work it does, and hands back only valid text,
integers of at most 64 bits (larger ones arrive as an `Opaque`, so no grader
arithmetic on them can run away) and well-formed tensors of bounded rank.
"""

from __future__ import annotations

import json
import math
import struct
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

MAX_TENSOR_ELEMENTS = 50_000_000
MAX_TENSOR_RANK = 8
MAX_MESSAGE_BYTES = 512 * 2**20
MAX_HEADER_BYTES = 16 * 2**20  # the structure; a header this size already decodes into millions of objects
MAX_DEPTH = 32
MAX_INT = 2**63 - 1  # integers beyond 64 bits arrive as an Opaque: bounded arithmetic for every grader

DTYPE_NAMES = ("float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool")


def _torch() -> Any:
    """torch, imported when a message holds tensors: plain data (the command line's own messages) needs none."""
    import torch

    return torch


@lru_cache(maxsize=None)
def _dtypes() -> dict[str, Any]:
    torch = _torch()
    return {name: getattr(torch, name) for name in DTYPE_NAMES}


@dataclass(frozen=True)
class Opaque:
    """Stands for a value that is not plain data (a numpy array, a module, a tensor subclass...)."""

    type_name: str
    detail: str = ""

    def __str__(self) -> str:
        return f"a {self.type_name}" + (f" ({self.detail})" if self.detail else "")


@dataclass(frozen=True)
class Handle:
    """Names an object that stays in the submission's process (a module, a catalogue callable)."""

    id: int


class WireError(ValueError):
    """The bytes are not a well-formed message."""


class _TooBig(Exception):
    """The tensors of a message would exceed MAX_MESSAGE_BYTES."""


class _Buffers(list):
    """The tensors' raw bytes, refusing to grow past the message limit (before a tensor is copied)."""

    size = 0

    def reserve(self, nbytes: int) -> None:
        if self.size + nbytes > MAX_MESSAGE_BYTES:
            raise _TooBig(f"over {MAX_MESSAGE_BYTES} bytes of tensors")
        self.size += nbytes


def encode(value: Any) -> bytes:
    """Message bytes for `value`; non-plain parts become `Opaque` descriptions."""
    buffers = _Buffers()
    try:
        header = _to_json(value, buffers, 0)
    except _TooBig as exc:
        return encode(Opaque("message", str(exc)))
    head = json.dumps(header, separators=(",", ":")).encode()
    if len(head) > MAX_HEADER_BYTES:
        return encode(Opaque("message", f"a structure of {len(head)} bytes, over the limit of {MAX_HEADER_BYTES}"))
    out = [struct.pack("<II", len(head), len(buffers)), head]
    for buf in buffers:
        out.append(struct.pack("<Q", len(buf)))
        out.append(buf)
    return b"".join(out)


def decode(data: bytes) -> Any:
    """The value of message bytes; raises `WireError` (and nothing else) for anything malformed."""
    try:
        head_len, n_buffers = struct.unpack_from("<II", data, 0)
        if head_len > MAX_HEADER_BYTES:
            raise WireError("structure over the size limit")
        pos = 8
        header = json.loads(data[pos : pos + head_len])
        pos += head_len
        buffers = []
        for _ in range(n_buffers):
            (size,) = struct.unpack_from("<Q", data, pos)
            pos += 8
            if pos + size > len(data):
                raise WireError("truncated buffer")
            buffers.append(data[pos : pos + size])
            pos += size
        if pos != len(data):
            raise WireError("trailing bytes")
        return _from_json(header, buffers, 0)
    except WireError:
        raise
    except Exception as exc:  # noqa: BLE001 - forged bytes may trip anything (RecursionError, ValueError, ...)
        raise WireError(f"malformed message: {type(exc).__name__}: {str(exc)[:200]}") from None


def op_of(data: bytes) -> str | None:
    """The `op` of a request the grader itself encoded (read from its header, without the tensors)."""
    try:
        (head_len,) = struct.unpack_from("<I", data, 0)
        node = json.loads(data[8 : 8 + head_len]).get("dict", {}).get("op", {})
        return node.get("str") if type(node) is dict else None
    except (struct.error, ValueError, AttributeError):
        return None


def _to_json(value: Any, buffers: _Buffers, depth: int) -> Any:
    if depth >= MAX_DEPTH:
        return {"opaque": ["structure", "nested too deeply"]}
    kind = type(value)
    if value is None or kind in (bool, str):
        return value if kind is not str else {"str": value}
    if kind is int:
        if abs(value) > MAX_INT:
            return {"opaque": ["int", "too large (more than 64 bits)"]}
        return {"int": str(value)}
    if kind is float:
        return {"float": repr(value)}
    if kind is bytes:
        buffers.reserve(len(value))
        buffers.append(value)
        return {"bytes": len(buffers) - 1}
    if kind in (list, tuple):
        return {kind.__name__: [_to_json(v, buffers, depth + 1) for v in value]}
    plain = _as_plain(value)
    if plain is not None:
        return _to_json(plain, buffers, depth + 1)
    if kind is dict:
        if not all(type(k) is str for k in value):
            return {"opaque": ["dict", "keys that are not all strings"]}
        return {"dict": {k: _to_json(v, buffers, depth + 1) for k, v in value.items()}}
    if kind is Handle:
        return {"handle": value.id}
    if kind is Opaque:
        return {"opaque": [value.type_name, value.detail]}
    torch = sys.modules.get("torch")  # not imported: nothing here can be a tensor
    if torch is not None:
        if kind is torch.dtype:
            return {"dtype": str(value).removeprefix("torch.")}
        if kind is torch.device:
            return {"device": str(value)}
        if kind is torch.nn.Parameter:
            value, kind = value.data, torch.Tensor
        if kind is torch.Tensor:
            return _tensor_to_json(value, buffers)
        if isinstance(value, torch.Tensor):
            return {"opaque": [f"tensor subclass {kind.__qualname__}", "return a plain torch.Tensor"]}
    return {"opaque": [f"{kind.__module__}.{kind.__qualname__}", ""]}


def _as_plain(value: Any) -> Any:
    """The plain value behind a subclass of a plain type or a numpy scalar, else None. (This runs on
    the submission's side, where whatever its conversion methods do harms no one.)"""
    if isinstance(value, bool):
        return bool(value)
    torch = sys.modules.get("torch")
    plains: tuple[type, ...] = (int, float, str, tuple, list)  # each one's constructor gives its plain value
    for plain in plains:
        if isinstance(value, plain) and not (torch is not None and isinstance(value, torch.Tensor)):
            return plain(value)
    if type(value).__module__ == "numpy" and getattr(value, "ndim", None) == 0 and hasattr(value, "item"):
        item = value.item()
        return item if type(item) in (bool, int, float, complex) and type(item) is not complex else None
    return None


def _tensor_to_json(t: Any, buffers: _Buffers) -> Any:
    torch = _torch()
    dtype = str(t.dtype).removeprefix("torch.")
    if dtype not in DTYPE_NAMES:
        return {"opaque": ["tensor", f"dtype {dtype} is not supported"]}
    if t.layout != torch.strided or t.is_quantized:
        return {"opaque": ["tensor", f"layout {t.layout}: return a dense tensor"]}
    if t.dim() > MAX_TENSOR_RANK:
        return {"opaque": ["tensor", f"{t.dim()} dimensions, over the limit of {MAX_TENSOR_RANK}"]}
    if t.numel() > MAX_TENSOR_ELEMENTS:  # before anything is copied: an expand() costs nothing until then
        return {"opaque": ["tensor", f"{t.numel()} elements, over the limit of {MAX_TENSOR_ELEMENTS}"]}
    buffers.reserve(t.numel() * t.element_size())
    flat = t.detach().to("cpu").contiguous().reshape(-1)
    raw = flat.view(torch.uint8) if flat.numel() else flat.new_empty(0).view(torch.uint8)
    buffers.append(raw.numpy().tobytes())
    return {"tensor": [dtype, list(t.shape), len(buffers) - 1, str(t.device)]}


def _from_json(node: Any, buffers: list[bytes], depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise WireError("nested too deeply")
    if node is None or type(node) is bool:
        return node
    if type(node) is not dict or len(node) != 1:
        raise WireError(f"unexpected node {str(node)[:80]}")
    (tag, body), = node.items()
    if tag == "str" and type(body) is str:
        return _text(body)
    if tag == "int" and type(body) is str and len(body) <= 20:
        value = int(body)
        return value if abs(value) <= MAX_INT else Opaque("int", "too large (more than 64 bits)")
    if tag == "float" and type(body) is str:
        return float(body)
    if tag in ("list", "tuple") and type(body) is list:
        items = [_from_json(v, buffers, depth + 1) for v in body]
        return items if tag == "list" else tuple(items)
    if tag == "dict" and type(body) is dict:
        return {_text(k): _from_json(v, buffers, depth + 1) for k, v in body.items()}
    if tag == "dtype" and body in DTYPE_NAMES:
        return _dtypes()[body]
    if tag == "device" and type(body) is str:
        return _device(body)
    if tag == "handle" and type(body) is int:
        return Handle(body)
    if tag == "bytes" and type(body) is int and 0 <= body < len(buffers):
        return bytes(buffers[body])
    if tag == "opaque" and type(body) is list and len(body) == 2:
        return Opaque(_text(str(body[0])[:200]), _text(str(body[1])[:500]))
    if tag == "tensor":
        return _tensor_from_json(body, buffers)
    raise WireError(f"unknown tag {tag!r}")


def _tensor_from_json(body: Any, buffers: list[bytes]) -> Any:
    torch = _torch()
    try:
        dtype_name, shape, index, device = body
    except (TypeError, ValueError):
        raise WireError("malformed tensor header") from None
    if dtype_name not in DTYPE_NAMES or type(index) is not int or not 0 <= index < len(buffers):
        raise WireError("malformed tensor header")
    if type(shape) is not list or len(shape) > MAX_TENSOR_RANK or not all(
            type(s) is int and 0 <= s <= MAX_TENSOR_ELEMENTS for s in shape):
        raise WireError("malformed tensor shape")
    dtype = _dtypes()[dtype_name]
    numel = math.prod(shape)
    raw = buffers[index]
    itemsize = torch.empty(0, dtype=dtype).element_size()
    if numel > MAX_TENSOR_ELEMENTS or len(raw) != numel * itemsize:
        raise WireError("tensor size does not match its shape")
    flat = torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw else torch.empty(0, dtype=torch.uint8)
    tensor = flat.view(dtype).reshape(shape)
    if dtype is torch.bool:
        tensor = tensor.view(torch.uint8) != 0  # only 0 and 1: other bytes make booleans that are neither
    if device == "cpu":
        return tensor
    if type(device) is str and _device(device).type == "cuda" and torch.cuda.is_available():
        return tensor.to(device)  # back where the submission left it, so graders can check devices
    raise WireError(f"tensor on an unexpected device {str(device)[:40]!r}")


def _text(text: str) -> str:
    """Valid Unicode only: a lone surrogate (from chr(0xD800)) would break writing the reports."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _device(name: str) -> Any:
    torch = _torch()
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError, TypeError):
        raise WireError(f"unknown device {name[:40]!r}") from None
    if device.type == "cpu" or (device.type == "cuda" and (device.index or 0) < torch.cuda.device_count()):
        return device
    raise WireError(f"unexpected device {name[:40]!r}")
