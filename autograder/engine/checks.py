"""What a grader check is made of: a points marker and assertions whose failures teach.

Every failure says what was checked, expected against got in a few numbers,
and the likely mistake. A check receives only plain data from the submission,
so each helper first makes sure the value is what it claims to be.

The likely mistake is the catalogue's words (autograder/hints.py), the same wherever it is named, so
that the class report can count it; what one check saw that points to it is its `detail`
(`Hint(text, detail)`). One slip often fails many checks of a part, each in its own way: a part's
`Diagnosis` probes the submission a few times (once, and only when a check has failed) for the
root causes it knows, and while a check it covers runs (`root_cause`), every failure of that
check names the root cause found, instead of its own guess.
"""

from __future__ import annotations

import contextlib
import contextvars
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NoReturn, Sequence

import pytest
import torch

from ..text import NOT_ATTEMPTED
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

    def __init__(self, message: str, figures: list[dict] | None = None, hint: str = ""):
        super().__init__(message)
        self.figures = list(figures or [])
        self.hint = hint


@dataclass(frozen=True)
class Hint:
    """A likely mistake: `text` in the catalogue's words (autograder/hints.py; what CheckResult.hint and
    the class report hold), `detail` what this check saw that points to it (shown after it)."""

    text: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.text} — {self.detail}" if self.detail else self.text


def as_hint(hint: "str | Hint | None") -> Hint | None:
    if not hint:
        return None
    return hint if isinstance(hint, Hint) else Hint(str(hint))


def fail(checked: str, expected: str, got: str, hint: "str | Hint | None" = None,
         figures: list[dict] | None = None) -> NoReturn:
    """Raise the standard four-line feedback; a root cause found for the running check (see
    `Diagnosis`) is named instead of `hint`. A hint of NOT_ATTEMPTED (text.py: the check's subject was
    left as released) is no mistake, and no root cause replaces it."""
    lines = [f"Checked: {checked}", f"Expected: {expected}", f"Got: {got}"]
    if (given := as_hint(hint)) and given.text == NOT_ATTEMPTED:
        lines.append(f"Not attempted yet{' — ' + given.detail if given.detail else ''}")
        raise Failure("\n".join(lines), figures, NOT_ATTEMPTED)
    found = as_hint(_root_cause()) or as_hint(hint)
    if found:
        lines.append(f"Likely mistake: {found}")
    raise Failure("\n".join(lines), figures, found.text if found else "")


# ---------------------------------------------------------------- root causes


Probe = Callable[[], "str | Hint | None"]


class Diagnosis:
    """The root cause behind the failures of some checks of a part, found by `probes` (each calls the
    submission on inputs made to tell the known mistakes apart, and names the one it recognises, or
    None): the first that names one wins. They run once per submission, the first time a covered check
    fails (a correct submission never pays for them). A check may also `note` a cause it saw itself
    (it ran out of memory, say) for the checks after it. A probe that breaks finds nothing: a diagnosis
    changes which mistake a failure names, never a verdict."""

    def __init__(self, *probes: Probe):
        self.probes = list(probes)
        self.noted: Hint | None = None
        self._found: Hint | None = None
        self._done = self._running = False

    def note(self, hint: "str | Hint") -> None:
        self.noted = self.noted or as_hint(hint)

    def cause(self) -> Hint | None:
        if self._running:  # a probe's own failure names its own mistake
            return None
        if not self._done:
            self._running = True
            token = _CAUSES.set(())  # a failure inside a probe names no root cause: it only ends that probe
            try:
                for probe in self.probes:
                    found = _quietly(probe)
                    if found:
                        self._found = found
                        break
            finally:
                _CAUSES.reset(token)
                self._running, self._done = False, True
        return self._found or self.noted


def _quietly(probe: Probe) -> Hint | None:
    from ..isolation.protocol import SandboxBreach

    try:
        return as_hint(probe())
    except SandboxBreach:
        raise
    except Exception:  # noqa: BLE001 - a submission that breaks under a probe keeps each check's own hint
        return None


_CAUSES: contextvars.ContextVar[tuple[Diagnosis, ...]] = contextvars.ContextVar("root_causes", default=())


@contextlib.contextmanager
def root_cause(*diagnoses: Diagnosis) -> Iterator[None]:
    """While this runs, a failure names the first root cause that `diagnoses` find (in their order)."""
    token = _CAUSES.set(tuple(diagnoses))
    try:
        yield
    finally:
        _CAUSES.reset(token)


def _root_cause() -> Hint | None:
    for diagnosis in _CAUSES.get():
        found = diagnosis.cause()
        if found:
            return found
    return None


def diagnosed(*names: str) -> Callable[[Any], Any]:
    """Mark a check as covered by its module's diagnoses `names` (see `covering`)."""
    def mark(test: Any) -> Any:
        test.diagnosed_by = tuple(names)
        return test
    return mark


def covering(test: Any, diagnoses: dict[str, Diagnosis]) -> list[Diagnosis]:
    """The diagnoses of `diagnoses` that cover `test` (a check function marked with `diagnosed`)."""
    return [diagnoses[name] for name in getattr(test, "diagnosed_by", ())]


def some(values: Sequence[Any], most: int = 4, digits: int = 4) -> str:
    """The first `most` of `values`, rounded, and "..." with how many there are when some are cut."""
    values = list(values)
    shown = ", ".join(repr(round(v, digits)) if type(v) is float else repr(v) for v in values[:most])
    return f"[{shown}, ...] ({len(values)} in all)" if len(values) > most else f"[{shown}]"


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


def expect_close(got: Any, want: torch.Tensor, checked: str, *, hint: "str | Hint | None" = None,
                 candidates: "dict[str | Hint, torch.Tensor] | None" = None, device: str | torch.device = "cpu",
                 axes: tuple[str, str] | None = None, meaning: tuple[str, str] | None = None) -> None:
    """`got` equals `want` within the device's tolerance, else say where and how far off it is.

    `candidates` maps a likely mistake to what that mistake would have returned: the
    first that matches `got` names the mistake, which beats a generic hint. A failure carries a
    picture (engine.figures.mismatch): expected against got cell by cell for two or more dimensions,
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
    fail(checked, *_worst_entry(got_cpu, want_cpu, atol, rtol), hint, figures)


def expect(condition: bool, checked: str, expected: str, got: str, hint: "str | Hint | None" = None,
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


def _worst_entry(got: torch.Tensor, want: torch.Tensor, atol: float, rtol: float) -> tuple[str, str]:
    """The entry furthest off, and how many differ as the pictures count them (fig.differing)."""
    if got.numel() == 0:
        return "an empty tensor", "an empty tensor"
    diff = (got - want).abs().nan_to_num(nan=float("inf"))
    index = unravel(int(diff.argmax()), tuple(diff.shape))
    where = f"[{', '.join(map(str, index))}]" if index else ""
    bad = int(fig.differing(want, got, atol, rtol).sum())
    return (f"value {want[index].item():.6g} at {where or 'the scalar'}",
            f"{got[index].item():.6g} there ({bad:,} of {got.numel():,} entries differ, largest gap "
            f"{diff.max().item():.3g})")


def bounded_numel(shape: Any, limit: int) -> int:
    """The product of a shape's sizes, or `limit` once it reaches it: a shape a submission reported
    (60,000 sizes of 62 bits, say) costs a few comparisons, never a huge product."""
    total = 1
    for size in shape:
        total *= size
        if total >= limit:
            return limit
    return total


def unravel(flat: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The index of entry `flat` of a tensor of `shape` (torch.unravel_index would import sympy)."""
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
