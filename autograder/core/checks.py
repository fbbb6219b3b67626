"""What a grader check is made of: a points marker and assertions whose failures teach.

Every failure says what was checked, expected against got in a few numbers,
and the likely mistake. A check receives only plain data from the submission,
so each helper first makes sure the value is what it claims to be.
"""

from __future__ import annotations

from typing import Any, Callable, NoReturn

import pytest
import torch

from . import figures as fig

TOLERANCES = {"cpu": (1e-5, 1e-4), "cuda": (1e-4, 1e-3)}
ROW_SUM_TOLERANCE = 1e-5


def check(name: str, points: float) -> pytest.MarkDecorator:
    """Mark a test as one graded check, `name` as students will read it (the part is added)."""
    return pytest.mark.check(name=name, points=points)


def waits(test: Any) -> Any:
    """Mark a check that mostly waits on the clock: while it runs, another worker may compute."""
    return pytest.mark.waits(test)


class Failure(AssertionError):
    """A check failed; the message is the student's feedback, `figures` what a picture shows better
    (plain data for the feedback page: see reports.figures)."""

    def __init__(self, message: str, figures: list[dict] | None = None):
        super().__init__(message)
        self.figures = list(figures or [])


def fail(checked: str, expected: str, got: str, hint: str | None = None, figures: list[dict] | None = None) -> NoReturn:
    """Raise the standard four-line feedback."""
    lines = [f"Checked: {checked}", f"Expected: {expected}", f"Got: {got}"]
    if hint:
        lines.append(f"Likely mistake: {hint}")
    raise Failure("\n".join(lines), figures)


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
                 candidates: dict[str, torch.Tensor] | None = None, device: str | torch.device = "cpu",
                 axes: tuple[str, str] | None = None, meaning: tuple[str, str] | None = None) -> None:
    """`got` equals `want` within the device's tolerance, else say where and how far off it is.

    `candidates` maps a likely mistake to what that mistake would have returned: the
    first that matches `got` names the mistake, which beats a generic hint. A failure carries a
    picture (core.figures.mismatch): expected against got cell by cell for two or more dimensions,
    `axes` naming the last two, `meaning` what True and False stand for; the worst entries otherwise.
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
    boolean = got.dtype == torch.bool and want.dtype == torch.bool  # drawn as True and False
    figures = fig.mismatch(checked, want.detach().cpu() if boolean else want_cpu,
                           got.detach().cpu() if boolean else got_cpu, atol=atol, rtol=rtol, axes=axes, meaning=meaning)
    fail(checked, *_worst_entry(got_cpu, want_cpu), hint, figures)


def expect(condition: bool, checked: str, expected: str, got: str, hint: str | None = None,
           figures: Callable[[], list[dict | None]] | None = None) -> None:
    """Fail with the standard feedback unless `condition` holds; `figures` makes the pictures of the
    failure (called only when it fails; one that raises or gives None adds nothing)."""
    if not condition:
        fail(checked, expected, got, hint, pictures(figures))


def pictures(make: Callable[[], list[dict | None]] | None) -> list[dict]:
    """What `make` gives, without the Nones; nothing when it raises: a picture never changes a verdict."""
    if make is None:
        return []
    try:
        return [f for f in make() if f is not None]
    except Exception:  # noqa: BLE001 - the failure stands whatever the picture would have shown
        return []


def _worst_entry(got: torch.Tensor, want: torch.Tensor) -> tuple[str, str]:
    if got.numel() == 0:
        return "an empty tensor", "an empty tensor"
    diff = (got - want).abs().nan_to_num(nan=float("inf"))
    index = unravel(int(diff.argmax()), tuple(diff.shape))
    where = f"[{', '.join(map(str, index))}]" if index else ""
    bad = int((diff > 0).sum())
    return (f"value {want[index].item():.6g} at {where or 'the scalar'}",
            f"{got[index].item():.6g} there ({bad} of {got.numel()} entries differ, largest gap {diff.max().item():.3g})")


def unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index of entry `flat` of a tensor of `shape` (torch.unravel_index would import sympy: 0.5 s)."""
    index = []
    for size in reversed(shape):
        flat, i = divmod(flat, size)
        index.append(i)
    return tuple(reversed(index))


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
