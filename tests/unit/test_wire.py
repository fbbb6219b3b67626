"""The plain-data format: what crosses between a submission and the graders, and nothing more."""

from __future__ import annotations

import collections
import json
import random
import struct

import numpy as np
import pytest
import torch

from autograder.isolation import wire


def roundtrip(value):
    return wire.decode(wire.encode(value))


def test_plain_values_round_trip():
    value = {"a": [1, 2.5, "x", None, True, (3, b"\x00\xff")], "t": torch.arange(6.0).reshape(2, 3),
             "dtype": torch.float16, "device": torch.device("cpu"), "handle": wire.Handle(4)}
    got = roundtrip(value)
    assert torch.equal(got.pop("t"), value.pop("t"))
    assert got == value


def test_every_supported_dtype_round_trips():
    for dtype in (torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.uint8,
                  torch.bool):
        t = (torch.arange(12) % 3).to(dtype).reshape(3, 4)
        assert torch.equal(roundtrip(t), t), dtype


def test_subclasses_of_plain_types_and_numpy_scalars_travel_as_plain_types():
    Pair = collections.namedtuple("Pair", "out weights")
    got = roundtrip([Pair(1, 2), np.float64(0.25), np.int64(7), np.bool_(True)])
    assert got == [(1, 2), 0.25, 7, True]
    assert [type(v) for v in got] == [tuple, float, int, bool]


def test_what_is_not_plain_data_arrives_as_an_opaque_description():
    class Sub(torch.Tensor):
        pass

    got = roundtrip([np.zeros(3), object(), torch.zeros(2).as_subclass(Sub), {1: "x"}])
    assert all(type(g) is wire.Opaque for g in got)
    assert "numpy.ndarray" in str(got[0]) and "subclass" in str(got[2])


def test_integers_beyond_64_bits_are_refused_so_grader_arithmetic_stays_bounded():
    assert roundtrip(2**63 - 1) == 2**63 - 1
    assert type(roundtrip(2**70)) is wire.Opaque
    assert type(wire.decode(_message({"int": "9" * 20}, []))) is wire.Opaque  # forged past 64 bits
    with pytest.raises(wire.WireError):
        wire.decode(_message({"int": "9" * 400}, []))


def test_tensor_rank_is_bounded_both_ways():
    assert type(roundtrip(torch.zeros([1] * 9))) is wire.Opaque
    forged = _message({"tensor": ["float32", [1] * 40000, 0, "cpu"]}, [b"\x00\x00\x00\x00"])
    with pytest.raises(wire.WireError):
        wire.decode(forged)


def test_forged_tensor_headers_are_refused():
    for body, buffers in ((["float32", [3], 0, "cpu"], [b"\x00" * 4]),  # size does not match the shape
                          (["float32", [-1], 0, "cpu"], [b""]), (["complex64", [1], 0, "cpu"], [b"\x00" * 8]),
                          (["float32", [1], 5, "cpu"], [b"\x00" * 4]), (["float32", [1], 0, "tpu:0"], [b"\x00" * 4])):
        with pytest.raises(wire.WireError):
            wire.decode(_message({"tensor": body}, buffers))


def test_booleans_are_only_true_or_false_whatever_the_bytes():
    got = wire.decode(_message({"tensor": ["bool", [3], 0, "cpu"]}, [b"\x00\x01\x07"]))
    assert got.tolist() == [False, True, True]


def test_decode_raises_only_wire_errors_on_garbage():
    rng = random.Random(0)
    good = wire.encode({"x": [torch.ones(3), "text", 1.5]})
    for _ in range(300):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        try:
            wire.decode(bytes(data[: rng.randint(0, len(data))]))
        except wire.WireError:
            pass


def test_nesting_is_bounded():
    deep: list = []
    for _ in range(100):
        deep = [deep]
    assert "deeply" in str(roundtrip(deep)).lower() or type(_innermost(roundtrip(deep))) is wire.Opaque
    forged = b"[" * 5000 + b"]" * 5000
    with pytest.raises(wire.WireError):
        wire.decode(struct.pack("<II", len(forged), 0) + forged)


def test_lone_surrogates_become_valid_text():
    assert roundtrip("a\ud800b") == "a?b"


def _innermost(value):
    while type(value) is list and value:
        value = value[0]
    return value


def _message(header: dict, buffers: list[bytes]) -> bytes:
    head = json.dumps(header).encode()
    out = [struct.pack("<II", len(head), len(buffers)), head]
    for b in buffers:
        out += [struct.pack("<Q", len(b)), b]
    return b"".join(out)
