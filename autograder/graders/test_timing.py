"""Hidden graders for part `timing` (15 points).

The harness is checked against synthetic workloads of known cost that the grader
itself serves: each call of the function a student times comes back here, sleeps
here and is counted here, so its cost and its record are out of the submission's
reach. A reported time is believed only within the grader's own measurement of
the whole request, and above a floor the workload sets; wrong answers differ from
right ones by ten times or more. On the CPU the real T² study's attention is served
the same way; on a GPU it runs beside the student's timer, which must synchronise
with it, and a missing synchronise shows as a flat curve.

Checks marked `waits` mostly sleep: a worker lets another compute meanwhile.
Every check here must pass 30 runs in a row on a loaded machine: see tests/test_timing_stability.py.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any

import pytest
import torch

import attention_ref as ref
from autograder.core import figures
from autograder.core.checks import as_number, check, expect, fail, pictures, waits
from autograder.core.plugin import available_devices
from autograder.isolation.proxy import StudentError

PART = "timing"

FAST = 0.001  # seconds of an ordinary synthetic call
SLOW = 0.15  # seconds of the one call a correct timer leaves out (the warm-up) or outvotes (the median)
SYNTHETIC_T2_SECONDS = 5e-8  # the synthetic study's workload sleeps this times T² seconds (2 to 50 ms)
SYNTHETIC_REPEATS = 2
CLOCK_SLACK = 2e-4  # seconds: reading the same clock in two processes
CLOCK_HINT = "time each call of fn(*args) with time.perf_counter()"  # less than the calls took: not wall-clock time


class Served:
    """A workload whose every call comes back to the grader, which serves it (`serve`) and clocks it."""

    def __init__(self) -> None:
        self.intervals: list[tuple[float, float]] = []  # (start, end) of each call, on the grader's clock

    def __call__(self, args: Any) -> None:
        start = time.monotonic()
        self.serve(args if type(args) is dict else {})
        self.intervals.append((start, time.monotonic()))

    def serve(self, args: dict) -> None:
        raise NotImplementedError

    @property
    def calls(self) -> int:
        return len(self.intervals)

    def last(self, n: int) -> list[int]:
        """The indices of the last `n` calls (the timed ones, after the warm-up)."""
        return list(range(max(0, self.calls - n), self.calls))

    def call_seconds(self) -> list[float]:
        """How long each call took, by the grader's clock."""
        return [end - start for start, end in self.intervals]

    def bracket(self, calls: list[int], request: tuple[float, float], statistic=statistics.median) -> tuple[float, float]:
        """The least and the most a correct timer can report as `statistic` of the durations of
        `calls`: each call's own duration at least, at most the whole time from the end of the call
        before it (or the request's start) to the start of the call after it (or the request's end).
        With `min` for the low end and `max` for the high one, any statistic of any of them fits."""
        lows, highs = [], []
        for i in calls:
            start, end = self.intervals[i]
            before = self.intervals[i - 1][1] if i > 0 else request[0]
            after = self.intervals[i + 1][0] if i + 1 < len(self.intervals) else request[1]
            lows.append(end - start)
            highs.append(after - before)
        low, high = (statistic(lows), statistic(highs)) if statistic else (min(lows), max(highs))
        return low - CLOCK_SLACK, high + CLOCK_SLACK


class Schedule(Served):
    """Call i sleeps `durations[i]` seconds (then `default`)."""

    def __init__(self, durations: list[float], default: float):
        super().__init__()
        self.durations, self.default = list(durations), default

    def serve(self, args: dict) -> None:
        i = self.calls
        time.sleep(self.durations[i] if i < len(self.durations) else self.default)


class Recorded(Served):
    """A served workload that records what each call was given (shapes, devices, dtypes)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[dict[str, Any]] = []

    def serve(self, args: dict) -> None:
        self.seen.append(args)
        self.work(self.tokens(len(self.seen) - 1))

    def work(self, T: int) -> None:
        raise NotImplementedError

    def tokens(self, call: int) -> int:
        shapes = self.seen[call].get("shapes") or [[]]
        first = shapes[0] if type(shapes[0]) is list else []
        return first[-2] if len(first) >= 2 and type(first[-2]) is int and first[-2] > 0 else 0

    def calls_with(self, T: int) -> list[int]:
        return [i for i in range(self.calls) if self.tokens(i) == T]


class Quadratic(Recorded):
    """Sleeps SYNTHETIC_T2_SECONDS · T² for inputs of T tokens."""

    def work(self, T: int) -> None:
        time.sleep(SYNTHETIC_T2_SECONDS * min(T, 2000) ** 2)


class RealAttention(Recorded):
    """Runs materialised attention here, on one thread, for inputs of T tokens when T is one of the
    study's (anything else costs nothing): the real T² cost, clocked by the grader however busy the
    machine is. One thread, because on a shared machine waking a thread pool costs more than a small grid."""

    def __init__(self, Ts: list[int], d_head: int):
        super().__init__()
        self.Ts, self.d_head = Ts, d_head

    def work(self, T: int) -> None:
        if T not in self.Ts:
            return
        q, k, v = torch.randn(3, 1, T, self.d_head)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            ref.materialized_attention(q, k, v)
        finally:
            torch.set_num_threads(threads)


def _time_call(student, workload: Served, repeats: int, warmup: int, checked: str) -> float:
    got = as_number(student.call("time_call", student.remote(workload), repeats=repeats, warmup=warmup), checked)
    expect(workload.calls > 0, checked, "fn called, then timed", "fn never called", "time each call of fn(*args)")
    return got


def _expect_median_of_last(got: float, workload: Served, repeats: int, student, checked: str, hint: str) -> None:
    """`got` lies within what the grader's clock allows for the median of the last `repeats` calls
    (the timed ones), so `return 0.0`, or a number from anywhere, fails. Each timed call measures at
    least its own duration, so a mean with one slow call among them is at least their mean: it fails
    whenever the machine is calm enough for the median's bracket to lie below that, and a correct
    median never does, however busy the machine."""
    timed = workload.last(repeats)
    low, high = workload.bracket(timed, student.last_request)
    expect(low <= got <= high, checked, f"between {low:.4g} and {high:.4g} s (the median of the timed calls, by the "
           "grader's clock)", f"{got:.4g} s", CLOCK_HINT if got < low else hint,
           lambda: _calls_picture(checked, workload, repeats, got, student))


def _calls_picture(checked: str, workload: Served, repeats: int, got: float, student) -> list[dict]:
    """Each call of fn by the grader's clock (the last `repeats` the timed ones), what the timer
    reported, and what the grader allows for the median of the timed calls."""
    timed = workload.last(repeats)
    return [figures.calls(checked, workload.call_seconds(), [i in timed for i in range(workload.calls)], got,
                          workload.bracket(timed, student.last_request) if timed else None)]


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


@waits
@check("time_call: warm-up calls are not timed", points=2)
def test_time_call_warmup(student):
    checked, schedule = "time_call(fn, repeats=1, warmup=1) where only the first call is slow", Schedule([SLOW], FAST)
    got = _time_call(student, schedule, 1, 1, checked)
    # Without a warm-up the one timed call is the slow one. The grader's clock decides the rest: under
    # load a correct timer may report far more than FAST, but never more than the second call allows.
    expect(schedule.calls > 1, checked, f"about {FAST} s (the slow first call is the untimed warm-up)",
           f"{got:.4g} s", "run untimed warm-up calls", lambda: _calls_picture(checked, schedule, 1, got, student))
    _expect_median_of_last(got, schedule, 1, student, checked, "run untimed warm-up calls")


@waits
@check("time_call: the median ignores one slow repeat", points=2)
def test_time_call_median(student):
    checked = "time_call(fn, repeats=5, warmup=1) where the third timed call is slow"
    schedule = Schedule([FAST, FAST, FAST, SLOW], FAST)
    got = _time_call(student, schedule, 5, 1, checked)
    _expect_median_of_last(got, schedule, 5, student, checked, "take the median of several runs")


@check("time_call: calls fn warmup + repeats times", points=1)
def test_time_call_count(student, gen):
    repeats, warmup = int(torch.randint(3, 6, (1,), generator=gen)), int(torch.randint(1, 3, (1,), generator=gen))
    schedule = Schedule([], 0.0)
    checked = f"time_call(fn, repeats={repeats}, warmup={warmup})"
    as_number(student.call("time_call", student.remote(schedule), repeats=repeats, warmup=warmup), checked)
    expect(schedule.calls == repeats + warmup, f"how often {checked} called fn", f"{repeats + warmup} times",
           f"{schedule.calls} times", "take the median of several runs")


@waits
@check("time_call: returns seconds of a known workload", points=1)
def test_time_call_units(student):
    seconds = 0.005
    checked = f"time_call(fn, repeats=3, warmup=1) on a fn that takes {seconds} s"
    schedule = Schedule([], seconds)
    got = _time_call(student, schedule, 3, 1, checked)
    # Any statistic of the timed calls: this check is about units, the median has its own.
    low, high = schedule.bracket(schedule.last(3), student.last_request, statistic=None)
    expect(low <= got <= high, checked, f"about {seconds} (seconds, from time.perf_counter; between {low:.4g} and "
           f"{high:.4g} by the grader's clock)", f"{got:.4g}", "return wall-clock seconds: time.perf_counter() after "
           "minus before", lambda: _calls_picture(checked, schedule, 3, got, student))


@waits
@check("time_call: synchronises with the GPU before reading the clock", points=1)
def test_time_call_synchronises(student, device):
    seconds = 0.05 if device == "cuda" else 0.005
    checked = f"time_call(fn, repeats=3, warmup=1) where fn does {seconds} s of work on {device}"
    # On a GPU the work is queued and the call returns at once: only a synchronised timer sees it.
    fn = student.catalogue("CudaSleepWorkload", seconds) if device == "cuda" else student.remote(Schedule([], seconds))
    got = as_number(student.call("time_call", fn, repeats=3, warmup=1), checked)
    expect(seconds / 2 <= got <= student.last_seconds, checked, f"about {seconds} s (at most {student.last_seconds:.4g} s, "
           "the whole call by the grader's clock)", f"{got:.4g} s", "synchronise before reading the clock")


@dataclass
class Study:
    """One synthetic study, shared by two checks: fn takes SYNTHETIC_T2_SECONDS · T² seconds."""

    Ts: list[int]
    d_head: int
    workload: Quadratic
    times: Any  # what time_attention returned, or the StudentError it raised
    request: tuple[float, float]

    @property
    def checked(self) -> str:
        return f"time_attention(fn, Ts={self.Ts}, d_head={self.d_head}, repeats={SYNTHETIC_REPEATS})"

    def valid_times(self) -> list[float]:
        if isinstance(self.times, StudentError):
            raise self.times
        expect(type(self.times) is list and len(self.times) == len(self.Ts) and all(
            type(t) is float and t > 0 for t in self.times), self.checked,
            f"a list of {len(self.Ts)} positive floats", f"{str(self.times)[:80]}")
        return self.times


@pytest.fixture(scope="module")
def study(student, module_gen) -> Study:
    start = int(torch.randint(200, 240, (1,), generator=module_gen))
    Ts, d_head, workload = [start, 2 * start, 4 * start], int(torch.randint(8, 48, (1,), generator=module_gen)), Quadratic()
    try:
        times = student.call("time_attention", student.remote(workload), Ts, d_head=d_head, repeats=SYNTHETIC_REPEATS)
    except StudentError as exc:
        times = exc
    return Study(Ts, d_head, workload, times, student.last_request)


@waits
@check("time_attention: fresh (1, T, d_head) inputs for every T, one time per T", points=1)
def test_time_attention_inputs(study):
    study.valid_times()
    shapes = sorted({tuple(tuple(s) for s in call.get("shapes", [])) for call in study.workload.seen})
    want = sorted(tuple([(1, T, study.d_head)] * 3) for T in study.Ts)
    expect(shapes == want, f"the shapes of q, k, v that {study.checked} passed to fn", f"{want}", f"{shapes}",
           "q, k, v of shape (1, T, d_head), fresh for each T")
    expect(all(call.get("distinct") is True for call in study.workload.seen), f"q, k and v passed by {study.checked}",
           "three different random tensors", "the same tensor more than once", "q, k, v are three fresh random tensors")


def _expect_clocked_times(times: list[float], Ts: list[int], workload: Recorded, request: tuple[float, float],
                          checked: str, cost: str) -> None:
    """Each T's time lies within what the grader's clock allows for its calls (any statistic of them: one
    T's calls all cost the same), so it holds however busy the machine is, and a made-up time does not."""
    def picture() -> list[dict]:
        allowed = [workload.bracket(workload.calls_with(T), request, statistic=None)
                   if len(workload.calls_with(T)) >= 2 else None for T in Ts]
        return [figures.loglog(f"{checked}, where fn takes {cost}", Ts, {"your times": times}, allowed=allowed)]

    for T, got in zip(Ts, times):
        calls, the_time = workload.calls_with(T), f"{checked}: the time for T = {T}, where fn takes {cost}"
        expect(len(calls) >= 2, the_time, "fn called on inputs of T tokens (a warm-up, then the timed calls)",
               f"{len(calls)} calls", "time each T with time_call(attn, q, k, v)", picture)
        low, high = workload.bracket(calls, request, statistic=None)
        expect(low <= got <= high, the_time, f"between {low:.4g} and {high:.4g} s (the median of its timed calls, by the "
               f"grader's clock; times {[f'{t:.3g}' for t in times]})", f"{got:.4g} s",
               "time each T with time_call(attn, q, k, v)", picture)


@check("time_attention: times grow as T² on a workload of cost T²", points=1)
def test_time_attention_quadratic(study):
    _expect_clocked_times(study.valid_times(), study.Ts, study.workload, study.request, study.checked,
                          f"{SYNTHETIC_T2_SECONDS:g} · T² s")


@check("fit_power_law: the slope of log(time) against log(T)", points=2)
def test_fit_power_law(student, gen):
    power = 1 + 2 * float(torch.rand(1, generator=gen))
    Ts = sorted(set(int(x) for x in torch.randint(16, 4096, (5,), generator=gen)))
    noise = 1 + 0.05 * torch.rand(len(Ts), generator=gen)
    times = [float(1e-6 * T**power * n) for T, n in zip(Ts, noise)]
    got = as_number(student.call("fit_power_law", Ts, times), f"fit_power_law(Ts={Ts}, times)")
    want = ref.fit_power_law(Ts, times)
    expect(math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-6), f"fit_power_law on times ∝ T^{power:.3f}",
           f"{want:.4f}", f"{got:.4f}", "fit log(time) against log(T): the least-squares slope",
           lambda: [figures.loglog(f"fit_power_law(Ts={Ts}, times)", Ts, {"times": times}, guides={
               f"slope {want:.3g} (the least-squares fit)": want, f"your slope {got:.3g}": got})])


# On a CPU the grader runs the real study's attention itself, on its own clock, so a busy machine
# cannot fail a correct timer. On a GPU the work must run in the submission's process, where its
# timer has to synchronise with it: a missing synchronise shows as a flat curve. Small grids there
# cost only launch overhead, so the study needs large T.
REAL_STUDY_TS = {"cpu": [256, 512, 1024], "cuda": [4096, 8192, 16384]}
REAL_STUDY_D_HEAD = 64
REAL_STUDY_REPEATS = 2
REAL_STUDY_ATTEMPTS = 3  # a busy machine can spoil one GPU study; a broken timer spoils every one
PEAK_FLOPS = 1e13  # no device here runs materialised attention faster: a floor for every reported time


@check("time_attention: a real study of materialised attention shows the T² cost", points=1)
def test_real_study(student):
    device = available_devices()[-1]  # the GPU when there is one, where a missing synchronise shows
    Ts = REAL_STUDY_TS[device]
    checked = f"time_attention(materialized attention, Ts={Ts}, device={device!r}, repeats={REAL_STUDY_REPEATS})"
    if device == "cpu":
        workload = RealAttention(Ts, REAL_STUDY_D_HEAD)
        times = student.call("time_attention", student.remote(workload), Ts, device=device, repeats=REAL_STUDY_REPEATS)
        _expect_study_times(times, Ts, checked)
        _expect_clocked_times(times, Ts, workload, student.last_request, checked, "what materialised attention takes")
        return
    attention = student.catalogue("materialized_attention")
    slopes, times, studies = [], [], {}
    picture = lambda: [figures.loglog(checked, Ts, studies)]  # noqa: E731
    for attempt in range(REAL_STUDY_ATTEMPTS):
        times = student.call("time_attention", attention, Ts, device=device, repeats=REAL_STUDY_REPEATS)
        _expect_study_times(times, Ts, checked)
        studies[f"study {attempt + 1}"] = times
        floors = [4 * T * T * REAL_STUDY_D_HEAD / PEAK_FLOPS for T in Ts]
        expect(all(t >= f for t, f in zip(times, floors)) and sum(times) <= student.last_seconds, checked,
               f"times each above what the work takes at least and adding up to at most {student.last_seconds:.4g} s "
               "(the whole call, by the grader's clock)", f"{[f'{t:.3g}' for t in times]}",
               "time each T with time_call(attn, q, k, v)", picture)
        slopes.append(ref.fit_power_law(Ts, times))
        # Wide band: a broken timer gives about 0 or 1.
        if 1.2 < slopes[-1] < 4.0:
            return
    fail(checked, "a log-log slope near 2 (doubling T quadruples the work)",
         f"slopes {[round(s, 2) for s in slopes]} in {len(slopes)} studies (last times {[f'{t:.3g}' for t in times]})",
         "synchronise before reading the clock" if max(slopes) < 1.2 else "time each T with time_call(attn, q, k, v)",
         pictures(picture))


def _expect_study_times(times: Any, Ts: list[int], checked: str) -> None:
    if type(times) is not list or len(times) != len(Ts) or not all(type(t) is float for t in times):
        fail(checked, f"{len(Ts)} times (floats)", str(times)[:80])
