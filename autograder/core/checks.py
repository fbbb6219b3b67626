"""What a grader check is made of: a points marker and assertions whose failures teach.

Every failure says what was checked, expected against got in a few numbers,
and the likely mistake. A check receives only plain data from the submission,
so each helper first makes sure the value is what it claims to be.
"""

from __future__ import annotations

from typing import Any, NoReturn

import pytest
import torch

TOLERANCES = {"cpu": (1e-5, 1e-4), "cuda": (1e-4, 1e-3)}
ROW_SUM_TOLERANCE = 1e-5


def check(name: str, points: float) -> pytest.MarkDecorator:
    """Mark a test as one graded check, `name` as students will read it (the part is added)."""
    return pytest.mark.check(name=name, points=points)


class Failure(AssertionError):
    """A check failed; the message is the student's feedback."""


def fail(checked: str, expected: str, got: str, hint: str | None = None) -> NoReturn:
    """Raise the standard four-line feedback."""
    lines = [f"Checked: {checked}", f"Expected: {expected}", f"Got: {got}"]
    if hint:
        lines.append(f"Likely mistake: {hint}")
    raise Failure("\n".join(lines))


def tolerance(device: str | torch.device) -> tuple[float, float]:
    """(atol, rtol) of docs/contract.md for results computed on `device`."""
    return TOLERANCES[torch.device(device).type]


DEVICE_HINT = "create new tensors on the input's device (device=x.device)"


def as_tensor(got: Any, checked: str, *, shape: tuple[int, ...] | None = None,
              dtype: torch.dtype | None = None, device: str | torch.device | None = None,
              device_hint: str = DEVICE_HINT) -> torch.Tensor:
    """`got` if it is a tensor of the expected shape, dtype and device; a teaching failure if not."""
    if type(got) is not torch.Tensor:
        hint = "return a torch.Tensor (not a list, numpy array or subclass)"
        fail(checked, "a torch.Tensor", describe(got), hint)
    if shape is not None and tuple(got.shape) != tuple(shape):
        fail(checked, f"shape {tuple(shape)}", f"shape {tuple(got.shape)}")
    if dtype is not None and got.dtype != dtype:
        fail(checked, f"dtype {dtype}", f"dtype {got.dtype}")
    if device is not None and got.device.type != torch.device(device).type:
        fail(checked, f"a result on {torch.device(device).type}", f"a result on {got.device.type}", device_hint)
    return got


def as_number(got: Any, checked: str) -> float:
    """`got` as a float if it is a real number (a 0-d tensor counts)."""
    if type(got) is torch.Tensor and got.numel() == 1 and not got.dtype.is_complex:
        return float(got.item())
    if type(got) in (int, float):
        return float(got)
    fail(checked, "a number", describe(got))


def expect_close(got: Any, want: torch.Tensor, checked: str, *, hint: str | None = None,
                 candidates: dict[str, torch.Tensor] | None = None, device: str | torch.device = "cpu") -> None:
    """`got` equals `want` within the device's tolerance, else say where and how far off it is.

    `candidates` maps a likely mistake to what that mistake would have returned: the
    first that matches `got` names the mistake, which beats a generic hint.
    """
    got = as_tensor(got, checked, shape=tuple(want.shape))
    atol, rtol = tolerance(device)
    got_cpu, want_cpu = got.detach().to("cpu", torch.float64), want.detach().to("cpu", torch.float64)
    if torch.allclose(got_cpu, want_cpu, atol=atol, rtol=rtol, equal_nan=True):
        return
    for mistake, wrong in (candidates or {}).items():
        wrong_cpu = wrong.detach().to("cpu", torch.float64)
        if wrong_cpu.shape == got_cpu.shape and torch.allclose(got_cpu, wrong_cpu, atol=atol, rtol=rtol, equal_nan=True):
            hint = mistake
            break
    fail(checked, *_worst_entry(got_cpu, want_cpu), hint)


def expect(condition: bool, checked: str, expected: str, got: str, hint: str | None = None) -> None:
    """Fail with the standard feedback unless `condition` holds."""
    if not condition:
        fail(checked, expected, got, hint)


def _worst_entry(got: torch.Tensor, want: torch.Tensor) -> tuple[str, str]:
    if got.numel() == 0:
        return "an empty tensor", "an empty tensor"
    diff = (got - want).abs().nan_to_num(nan=float("inf"))
    index = tuple(int(i) for i in torch.unravel_index(diff.argmax(), diff.shape))
    where = f"[{', '.join(map(str, index))}]" if index else ""
    bad = int((diff > 0).sum())
    return (f"value {want[index].item():.6g} at {where or 'the scalar'}",
            f"{got[index].item():.6g} there ({bad} of {got.numel()} entries differ, largest gap {diff.max().item():.3g})")


def describe(value: Any) -> str:
    """A few words on what a submission returned, for "Got: ..."."""
    if type(value) is torch.Tensor:
        return f"a tensor of shape {tuple(value.shape)}"
    if type(value) in (tuple, list):
        return f"a {type(value).__name__} of {len(value)} items"
    if type(value) in (int, float, bool, str):
        return f"{type(value).__name__} {repr(value)[:60]}"
    return str(value)[:80]


def draw(gen: torch.Generator, low: int, high: int, n: int = 1) -> list[int]:
    """`n` integers from low to high inclusive: the sizes of a check's inputs, per student."""
    return torch.randint(low, high + 1, (n,), generator=gen).tolist()
