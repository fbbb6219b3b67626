"""Hidden graders for part `timing` (15 points).

The harness is checked against synthetic workloads of known cost (sleeps the
submission's own timer measures), so every check holds on any machine: the
margins between a right and a wrong answer are ten-fold or more. Only the
last check times real attention, where the band is wide.

Every check here must pass 30 runs in a row on a loaded machine: see
tests/test_graders_timing.py.
"""

from __future__ import annotations

import math

import pytest
import torch

import attention_ref as ref
from autograder.checks import as_number, check, expect, fail
from autograder.plugin import available_devices
from autograder.student import StudentError

PART = "timing"

FAST = 0.003  # seconds of an ordinary synthetic call
SLOW = 0.3  # seconds of a call a correct timer leaves out


def _time(student, workload, repeats: int, warmup: int, checked: str) -> float:
    return as_number(student.call("time_call", workload, repeats=repeats, warmup=warmup), checked)


@check("score_grid_bytes: one float32 grid is T² · 4 bytes", points=1)
def test_bytes_single_grid(student, gen):
    T = int(torch.randint(50, 5000, (1,), generator=gen))
    got = as_number(student.call("score_grid_bytes", T), f"score_grid_bytes({T})")
    expect(got == ref.score_grid_bytes(T), f"score_grid_bytes({T})", f"{ref.score_grid_bytes(T):,} bytes",
           f"{got:,.0f}", "B · H · T² · itemsize")


@check("score_grid_bytes: counts every head and every sequence in the batch", points=1)
def test_bytes_heads_and_batch(student, gen):
    T, H, B = (int(x) for x in torch.randint(2, 300, (3,), generator=gen))
    got = as_number(student.call("score_grid_bytes", T, n_heads=H, batch=B), f"score_grid_bytes({T}, n_heads={H}, batch={B})")
    want = ref.score_grid_bytes(T, n_heads=H, batch=B)
    expect(got == want, f"score_grid_bytes({T}, n_heads={H}, batch={B})", f"{want:,} bytes", f"{got:,.0f}",
           "B · H · T² · itemsize")


@check("score_grid_bytes: uses the item size of the dtype", points=1)
def test_bytes_dtype(student, gen):
    T = int(torch.randint(50, 3000, (1,), generator=gen))
    for dtype in (torch.float16, torch.float64, torch.bfloat16):
        got = as_number(student.call("score_grid_bytes", T, dtype=dtype), f"score_grid_bytes({T}, dtype={dtype})")
        want = ref.score_grid_bytes(T, dtype=dtype)
        expect(got == want, f"score_grid_bytes({T}, dtype={dtype})", f"{want:,} bytes", f"{got:,.0f}",
               "B · H · T² · itemsize")


@check("time_call: warm-up calls are not timed", points=2)
def test_time_call_warmup(student):
    workload = student.catalogue("SleepWorkload", [SLOW], FAST)
    got = _time(student, workload, repeats=1, warmup=1, checked="time_call(fn, repeats=1, warmup=1) on a fn whose first call is slow")
    expect(got < 10 * FAST, "time_call(fn, repeats=1, warmup=1) where only the first call is slow",
           f"about {FAST} s (the slow first call is the untimed warm-up)", f"{got:.4g} s", "run untimed warm-up calls")


@check("time_call: the median ignores one slow repeat", points=2)
def test_time_call_median(student):
    workload = student.catalogue("SleepWorkload", [FAST, FAST, FAST, SLOW], FAST)
    got = _time(student, workload, repeats=5, warmup=1, checked="time_call(fn, repeats=5, warmup=1)")
    expect(got < 10 * FAST, "time_call(fn, repeats=5, warmup=1) where the third timed call is slow",
           f"about {FAST} s (the median of five)", f"{got:.4g} s", "take the median of several runs")


@check("time_call: calls fn warmup + repeats times", points=1)
def test_time_call_count(student, gen):
    repeats, warmup = int(torch.randint(3, 6, (1,), generator=gen)), int(torch.randint(1, 3, (1,), generator=gen))
    workload = student.catalogue("SleepWorkload", [], 0.0)
    _time(student, workload, repeats=repeats, warmup=warmup, checked=f"time_call(fn, repeats={repeats}, warmup={warmup})")
    calls = student.method(workload, "report")["calls"]
    expect(calls == repeats + warmup, f"how often time_call(fn, repeats={repeats}, warmup={warmup}) called fn",
           f"{repeats + warmup} times", f"{calls} times", "take the median of several runs")


@check("time_call: returns seconds of a known workload", points=1)
def test_time_call_units(student):
    seconds = 0.02
    workload = student.catalogue("SleepWorkload", [], seconds)
    got = _time(student, workload, repeats=3, warmup=1, checked="time_call(fn) on a fn that takes 0.02 s")
    expect(0.015 <= got < 0.5, "time_call(fn, repeats=3, warmup=1) on a fn that takes 0.02 s",
           "about 0.02 (seconds, from time.perf_counter)", f"{got:.4g}",
           "return wall-clock seconds: time.perf_counter() after minus before")


@check("time_call: synchronises with the GPU before reading the clock", points=1)
def test_time_call_synchronises(student, device):
    seconds = 0.05
    # On a GPU the work is queued and the call returns at once: only a synchronised timer sees it.
    workload = student.catalogue("CudaSleepWorkload" if device == "cuda" else "SleepWorkload", *(
        (seconds,) if device == "cuda" else ([], seconds)))
    got = _time(student, workload, repeats=3, warmup=1, checked=f"time_call(fn) on {seconds} s of work on {device}")
    expect(got > seconds / 2, f"time_call(fn) where fn does {seconds} s of work on {device}",
           f"about {seconds} s", f"{got:.4g} s", "synchronise before reading the clock")


@pytest.fixture(scope="module")
def quadratic_study(student, module_gen) -> tuple[list[int], int, object, object]:
    """One synthetic study shared by two checks: fn takes 1e-6 · T² seconds."""
    start = int(torch.randint(96, 128, (1,), generator=module_gen))
    Ts = [start, 2 * start, 4 * start]
    d_head = int(torch.randint(8, 48, (1,), generator=module_gen))
    workload = student.catalogue("QuadraticWorkload", 1e-6)
    try:
        times = student.call("time_attention", workload, Ts, d_head=d_head, repeats=2)
    except StudentError as exc:
        times = exc
    return Ts, d_head, workload, times


def _study_times(quadratic_study) -> list[float]:
    Ts, d_head, _, times = quadratic_study
    if isinstance(times, StudentError):
        raise times
    checked = f"time_attention(fn, Ts={Ts}, d_head={d_head}, repeats=2)"
    expect(type(times) is list and len(times) == len(Ts) and all(type(t) is float and t > 0 for t in times), checked,
           f"a list of {len(Ts)} positive floats", f"{str(times)[:80]}")
    return times


@check("time_attention: fresh (1, T, d_head) inputs for every T, one time per T", points=1)
def test_time_attention_inputs(student, quadratic_study):
    Ts, d_head, workload, _ = quadratic_study
    _study_times(quadratic_study)
    checked = f"time_attention(fn, Ts={Ts}, d_head={d_head}, repeats=2)"
    seen = student.method(workload, "report")
    shapes = sorted({tuple(tuple(s) for s in call["shapes"]) for call in seen})
    want = sorted(tuple([(1, T, d_head)] * 3) for T in Ts)
    expect(shapes == want, f"the shapes of q, k, v that {checked} passed to fn", f"{want}", f"{shapes}",
           "q, k, v of shape (1, T, d_head), fresh for each T")
    expect(all(call["distinct"] for call in seen), f"q, k and v passed by {checked}",
           "three different random tensors", "the same tensor more than once", "q, k, v are three fresh random tensors")


@check("time_attention: times grow as T² on a workload of cost T²", points=1)
def test_time_attention_quadratic(quadratic_study):
    Ts, d_head, _, _ = quadratic_study
    times = _study_times(quadratic_study)
    slope = ref.fit_power_law(Ts, times)
    expect(1.6 < slope < 2.4, f"time_attention(fn, Ts={Ts}, d_head={d_head}) where fn takes 1e-6 · T² s",
           "times whose log-log slope is about 2", f"slope {slope:.2f} (times {[f'{t:.3g}' for t in times]})",
           "time each T with time_call(attn, q, k, v)")


@check("fit_power_law: the slope of log(time) against log(T)", points=2)
def test_fit_power_law(student, gen):
    power = 1 + 2 * float(torch.rand(1, generator=gen))
    Ts = sorted(set(int(x) for x in torch.randint(16, 4096, (5,), generator=gen)))
    noise = 1 + 0.05 * torch.rand(len(Ts), generator=gen)
    times = [float(1e-6 * T**power * n) for T, n in zip(Ts, noise)]
    got = as_number(student.call("fit_power_law", Ts, times), f"fit_power_law(Ts={Ts}, times)")
    want = ref.fit_power_law(Ts, times)
    expect(math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-6), f"fit_power_law on times ∝ T^{power:.3f}",
           f"{want:.4f}", f"{got:.4f}", "fit log(time) against log(T): the least-squares slope")


# On a GPU small grids cost only launch overhead, so the study needs large T there; on a CPU,
# grids from 1,024 tokens up take long enough that scheduling noise on a busy machine is small.
REAL_STUDY_TS = {"cpu": [1024, 2048, 4096], "cuda": [4096, 8192, 16384]}
REAL_STUDY_ATTEMPTS = 3  # a busy machine can spoil one study; a broken timer spoils every one


@check("time_attention: a real study of materialised attention shows the T² cost", points=1)
def test_real_study(student):
    device = available_devices()[-1]  # the GPU when there is one, where a missing synchronise shows
    Ts = REAL_STUDY_TS[device]
    checked = f"time_attention(materialized attention, Ts={Ts}, device={device!r}, repeats=3)"
    slopes = []
    for _ in range(REAL_STUDY_ATTEMPTS):
        times = student.call("time_attention", student.catalogue("single_thread_attention"), Ts, device=device, repeats=3)
        if type(times) is not list or len(times) != len(Ts) or not all(type(t) is float and t > 0 for t in times):
            fail(checked, f"{len(Ts)} positive times", str(times)[:80])
        slopes.append(ref.fit_power_law(Ts, times))
        # Wide band: cache effects push a CPU's slope up; a broken timer gives about 0 or 1.
        if 1.2 < slopes[-1] < 4.0:
            return
    fail(checked, "a log-log slope near 2 (doubling T quadruples the work)",
         f"slopes {[round(s, 2) for s in slopes]} in {len(slopes)} studies (last times {[f'{t:.3g}' for t in times]})",
         "synchronise before reading the clock" if max(slopes) < 1.2 else "time each T with time_call(attn, q, k, v)")
