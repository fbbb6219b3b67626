"""Hidden graders for part `timing`.

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

One slip in time_call (milliseconds, no warm-up, a total) fails most checks of time_call and
time_attention, each judging one aspect of what it saw. When one of them fails, a diagnosis times two
known schedules with the submission's time_call (a slow first call; a slow third timed call) and
reads the root cause off what it returned and how often it called fn (`_timer_probe`; on a GPU also
a workload queued on the device, which only a synchronised timer sees); time_attention's is read off
the inputs of the study it ran. Every failed check they cover then names that one mistake.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import pytest
import torch

import attention_ref as ref
from autograder.engine.kit import (Diagnosis, Failure, Hint, Seen, StudentError, as_number, available_devices, check,
                                   covering, diagnosed, expect, fail, figures, hint as catalogued, pictures, root_cause,
                                   waits)

PART = "timing"

# Every duration a check compares against is drawn per student, and each check of time_call runs two
# workloads whose speeds differ by 2.5 to 4 times: no constant, nor a number that does not come from
# timing the calls, can pass.
FAST = (0.001, 0.004)  # seconds of an ordinary synthetic call, the slower workload's from 2.5 to 4 times this
SLOW = (0.12, 0.2)  # seconds of the one call a correct timer leaves out (the warm-up) or outvotes (the median)
UNITS = (0.003, 0.008)  # seconds of each call of the units check's first workload
SYNTHETIC_T2_SECONDS = (1.5e-8, 3e-8)  # the synthetic study's workload sleeps this times T² seconds (0.6 to 28 ms)
SYNTHETIC_REPEATS = 2
MAX_SECOND_SPEED = 0.25  # seconds: however busy the machine, a second workload no slower than this
CLOCK_SLACK = 2e-4  # seconds: reading the same clock in two processes
CLOCK_HINT = catalogued("timing.clock")  # less than the calls took: not wall-clock time
# The hints of the catalogue (autograder/hints.py) this part gives most.
UNITS_HINT = catalogued("timing.units")
WARMUP_HINT = catalogued("timing.warmup")
MEDIAN_HINT = catalogued("timing.median")
TOTAL_HINT = catalogued("timing.total")
COUNT_HINT = catalogued("timing.count")
SYNC_HINT = catalogued("timing.synchronise")
BYTES_HINT = catalogued("timing.grid_bytes")
FIT_HINT = catalogued("timing.log_log")
FRESH_HINT = catalogued("timing.fresh")
EACH_T_HINT = "time each T with time_call(attn, q, k, v)"
# The diagnosis's schedules: calls this fast and this slow are told apart on any machine.
PROBE_FAST, PROBE_SLOW = 0.004, 0.06
UNIT_SCALES = {1e3: "milliseconds", 1e6: "microseconds", 1e9: "nanoseconds"}


class Served:
    """A workload whose every call comes back to the grader, which serves it (`serve`) and clocks it."""

    def __init__(self) -> None:
        self.intervals: list[tuple[float, float]] = []  # (start, end) of each call, on the grader's clock
        self.request = (0.0, 0.0)  # the span of the request that made the calls, where a probe records it
        self.cpu: float | None = None  # the CPU time that request caused, by the kernel, where a probe records it

    def __call__(self, seen: Seen) -> None:
        start = time.monotonic()
        self.serve(seen)
        self.intervals.append((start, time.monotonic()))

    def serve(self, seen: Seen) -> None:
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

    def serve(self, seen: Seen) -> None:
        i = self.calls
        time.sleep(self.durations[i] if i < len(self.durations) else self.default)


class Recorded(Served):
    """A served workload that records what each call was given (shapes, devices, dtypes)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Seen] = []

    def serve(self, seen: Seen) -> None:
        self.seen.append(seen)
        self.work(self.tokens(len(self.seen) - 1))

    def work(self, T: int) -> None:
        raise NotImplementedError

    def tokens(self, call: int) -> int:
        shapes = self.seen[call].shapes
        return shapes[0][-2] if shapes and len(shapes[0]) >= 2 else 0

    def calls_with(self, T: int) -> list[int]:
        return [i for i in range(self.calls) if self.tokens(i) == T]


class Quadratic(Recorded):
    """Sleeps `per_token2` · T² seconds for inputs of T tokens."""

    def __init__(self, per_token2: float):
        super().__init__()
        self.per_token2 = per_token2

    def work(self, T: int) -> None:
        time.sleep(self.per_token2 * min(T, 2000) ** 2)


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


# ---------------------------------------------------------------- root causes, probed once per submission


def _probe(student, schedule: "Schedule", repeats: int, warmup: int) -> float | None:
    """What time_call returned on `schedule` (None when not a number); the request's span in `schedule.request`,
    the CPU time it caused in `schedule.cpu`."""
    got = student.call("time_call", student.remote(schedule), repeats=repeats, warmup=warmup)
    schedule.request, schedule.cpu = student.last_request, student.last_work_seconds
    if type(got) is torch.Tensor and got.numel() == 1 and got.dtype.is_floating_point:
        return float(got.item())
    return float(got) if type(got) in (int, float) else None


def _cpu_clock(got: float, served: "Served", shortest: float) -> bool:
    """Whether `got` can only come from a clock that does not count waiting: less than the shortest call took
    (a wall clock reads at least the call it timed), and no more than the CPU time the whole request caused,
    by the kernel's count (however long a busy machine made the submission's own share of it). Where the kernel
    gave no count, a fifth of the shortest call."""
    if not 0 <= got < shortest:
        return False
    return got <= served.cpu + CLOCK_SLACK if served.cpu is not None else got < shortest / 5


def _within(x: float, bracket: tuple[float, float]) -> bool:
    return bracket[0] <= x <= bracket[1]


def _timer_probe(student) -> Hint | None:
    """The root cause behind a wrong time_call: two schedules timed, each telling some mistakes apart.

    A (repeats=1, warmup=1): a slow first call, then fast ones: a timed warm-up shows, and a unit.
    B (repeats=5, warmup=1): the third timed call slow: a mean or a total shows, and how often fn ran."""
    a = Schedule([PROBE_SLOW], PROBE_FAST)
    got_a = _probe(student, a, 1, 1)
    b = Schedule([PROBE_FAST] * 3 + [PROBE_SLOW], PROBE_FAST)
    got_b = _probe(student, b, 5, 1)
    if got_a is None or got_b is None or not a.calls or not b.calls:
        return None
    every_a, every_b = list(range(a.calls)), list(range(b.calls))
    for scale, unit in UNIT_SCALES.items():  # in that unit, between the shortest call and all calls together
        if all(served.bracket(calls, served.request, None)[0] <= got / scale <= served.bracket(
                calls, served.request, sum)[1] for served, calls, got in ((a, every_a, got_a), (b, every_b, got_b))):
            took = statistics.median(b.call_seconds()[-5:])
            return Hint(UNITS_HINT, f"on calls that took {took:.3g} s by the grader's clock your time_call reported "
                                    f"{got_b:.4g}: {unit}, {scale:g} times the seconds")
    shortest = min(end - start for start, end in a.intervals + b.intervals)
    if all(_cpu_clock(got, served, shortest) for got, served in ((got_a, a), (got_b, b))):
        return Hint(CLOCK_HINT, f"on calls of at least {shortest:.3g} s it reported {got_b:.3g}: that clock does not "
                                "count the time a call waits (CPU time, time.process_time)")
    if a.calls == 1 and b.calls == 5:
        return Hint(WARMUP_HINT, "fn ran only `repeats` times: the warm-up calls are missing")
    if a.calls > 2 or b.calls > 6:
        return Hint(COUNT_HINT, f"fn ran {a.calls} times for repeats=1, warmup=1 and {b.calls} for repeats=5, "
                                "warmup=1: a benchmark timer (blocked_autorange, timeit) chooses its own number of "
                                "runs; time each of the `repeats` calls yourself")
    if b.calls == 2:
        return Hint(MEDIAN_HINT, "one call was timed, whatever `repeats` says")
    if a.calls == 2 and got_a > a.bracket([1], a.request)[1] and _within(got_a, a.bracket(every_a, a.request, None)):
        return Hint(WARMUP_HINT, f"with warmup=1 and a slow first call it reported {got_a:.3g} s: the warm-up call "
                                 "was among the timed ones")
    if b.calls == 6:
        timed = b.last(5)
        if _within(got_b, b.bracket(timed, b.request, sum)):
            return Hint(TOTAL_HINT, "this is their total, not their median")
        if got_b > b.bracket(timed, b.request)[1] and _within(got_b, b.bracket(timed, b.request, statistics.fmean)):
            return Hint(MEDIAN_HINT, "this is their mean, which one slow call drags up")
    if torch.cuda.is_available():
        seconds, counted = 0.03, Counted()
        got = as_number(student.call("time_call", student.local("gpu_sleep", seconds, counted), repeats=1, warmup=1),
                        "time_call")
        if counted.calls == 2 and got < seconds / 2:
            return Hint(SYNC_HINT, f"on {seconds:g} s of GPU work it reported {got:.3g} s: the clock was read before "
                                   "the queued work had run (torch.cuda.synchronize())")
    return None


def _study_probe(study: "Study") -> Hint | None:
    """The root cause behind a wrong time_attention, read off the inputs its study passed to fn."""
    if isinstance(study.times, StudentError):
        return None
    seen = [call.shapes for call in study.workload.seen]
    missing = [T for T in study.Ts if not study.workload.calls_with(T)]
    if missing or any(shapes != ((1, shapes[0][1], study.d_head),) * 3 for shapes in seen if shapes):
        got = sorted(set(seen))[:3]
        return Hint(FRESH_HINT, f"for Ts={study.Ts} fn got inputs of shapes {got}"
                                + (f", none with T = {missing[0]}" if missing else ""))
    if not all(call.distinct for call in study.workload.seen):
        return Hint("q, k, v are three fresh random tensors", "the same tensor was passed more than once")
    return None


@pytest.fixture(scope="module")
def diagnoses(student, request) -> dict[str, Diagnosis]:
    return {"time_call": Diagnosis(lambda: _timer_probe(student)),
            "time_attention": Diagnosis(lambda: _study_probe(request.getfixturevalue("study")))}


@pytest.fixture(autouse=True)
def _named_once(request, diagnoses):
    """A failed check names the root cause its functions' diagnoses find, time_call's first."""
    with root_cause(*covering(request.function, diagnoses)):
        yield


def uniform(gen: torch.Generator, low: float, high: float) -> float:
    return low + (high - low) * float(torch.rand(1, generator=gen))


def speeds(gen: torch.Generator, low: float, high: float) -> Iterator[float]:
    """The call durations of a check's two workloads, drawn per student: the second is 2.5 to 4 times the
    first, and at least 1.5 times the most the grader's clock allowed for the first (`.send` it that), so
    that no single number fits both, however busy the machine."""
    first = uniform(gen, low, high)
    allowed = yield first
    yield min(MAX_SECOND_SPEED, max(first * uniform(gen, 2.5, 4.0), 1.5 * (allowed or 0.0)))


def _two_runs(gen: torch.Generator, low: float, high: float) -> Iterator[tuple[int, float, Callable[[float], None]]]:
    """(run 0 or 1, its duration, a callback to tell it what the first run's clock allowed at most)."""
    durations = speeds(gen, low, high)
    told: list[float] = []
    yield 0, next(durations), told.append
    yield 1, durations.send(told[0] if told else 0.0), told.append


def _slow_first_then_fast(gen: torch.Generator) -> Iterator[tuple[int, float, float, Callable[[float], None]]]:
    """(run 0 or 1, the first call's duration, the others', the callback of `_two_runs`): run 0's first call
    is slow; run 1, all fast, outs a timer that returns a constant."""
    slow = uniform(gen, *SLOW)
    for run, fast, allowed in _two_runs(gen, *FAST):
        yield run, slow if run == 0 else fast, fast, allowed


def _time_call(student, workload: Served, repeats: int, warmup: int, checked: str) -> float:
    _expect_own_count(student, repeats, warmup)
    got = as_number(student.call("time_call", student.remote(workload), repeats=repeats, warmup=warmup), checked)
    expect(workload.calls > 0, checked, "fn called, then timed", "fn never called", "time each call of fn(*args)")
    # More calls than warmup + repeats (a benchmark timer's own choice): which of them it timed the grader cannot
    # tell, so the clock could judge its number in some runs and not others. The count decides, on every run.
    expect(workload.calls <= warmup + repeats, f"how often {checked} called fn", f"{warmup + repeats} times",
           f"{workload.calls} times", _count_hint(workload.calls, repeats, warmup))
    return got


def _expect_own_count(student, repeats: int, warmup: int) -> None:
    """time_call calls a fn that returns at once exactly warmup + repeats times. A timer that picks its own
    count (a benchmark's autorange) picks more for such a fn on every run, where for a workload that sleeps
    how many it picks depends on the machine's noise: so the checks that time a workload fail it alike on
    every run, however busy the machine."""
    free = Schedule([], 0.0)
    checked = f"time_call(fn, repeats={repeats}, warmup={warmup}) on a fn that returns at once"
    as_number(student.call("time_call", student.remote(free), repeats=repeats, warmup=warmup), checked)
    expect(free.calls == warmup + repeats, f"how often {checked} called fn", f"{warmup + repeats} times",
           f"{free.calls} times", _count_hint(free.calls, repeats, warmup))


def _expect_median_of_last(got: float, workload: Served, repeats: int, student, checked: str, hint: str,
                           also_of_all: bool = False) -> float:
    """`got` lies within what the grader's clock allows for the median of the last `repeats` calls
    (the timed ones), so `return 0.0`, or a number from anywhere, fails. Each timed call measures at
    least its own duration, so a mean with one slow call among them is at least their mean: it fails
    whenever the machine is calm enough for the median's bracket to lie below that, and a correct
    median never does, however busy the machine. `also_of_all` allows the median of every call too:
    a timer that also times its warm-up is the warm-up check's to catch, and the median of calls
    clocked apart lies in their bracket on every run, where the median of one more could fall either
    side of the timed calls' bracket with the machine's noise. Returns the most it allowed."""
    timed = workload.last(repeats)
    low, high = workload.bracket(timed, student.last_request)
    if also_of_all:
        low_all, high_all = workload.bracket(list(range(workload.calls)), student.last_request)
        low, high = min(low, low_all), max(high, high_all)
    expect(low <= got <= high, checked, f"between {low:.4g} and {high:.4g} s (the median of the timed calls, by the "
           "grader's clock)", f"{got:.4g} s", CLOCK_HINT if got < low else hint,
           lambda: _calls_picture(checked, workload, repeats, got, student, (low, high)))
    return high


def _calls_picture(checked: str, workload: Served, repeats: int, got: float, student,
                   allowed: tuple[float, float] | None = None) -> list[dict]:
    """Each call of fn by the grader's clock (the last `repeats` the timed ones), what the timer
    reported, and what the grader allows: `allowed`, the range the check's message gives, else (the
    same computation as `_expect_median_of_last`'s) the median of the timed calls'."""
    timed = workload.last(repeats)
    allowed = allowed or (workload.bracket(timed, student.last_request) if timed else None)
    return [figures.calls(checked, workload.call_seconds(), [i in timed for i in range(workload.calls)], got, allowed)]


@check("score_grid_bytes: one float32 grid is T² · 4 bytes", points=1)
def test_bytes_single_grid(student, gen):
    T = int(torch.randint(50, 5000, (1,), generator=gen))
    got = as_number(student.call("score_grid_bytes", T), f"score_grid_bytes({T})")
    expect(got == ref.score_grid_bytes(T), f"score_grid_bytes({T})", f"{ref.score_grid_bytes(T):,} bytes",
           f"{got:,.0f}", BYTES_HINT)


@check("score_grid_bytes: counts every head and every sequence in the batch", points=1)
def test_bytes_heads_and_batch(student, gen):
    T, H, B = (int(x) for x in torch.randint(2, 300, (3,), generator=gen))
    got = as_number(student.call("score_grid_bytes", T, n_heads=H, batch=B), f"score_grid_bytes({T}, n_heads={H}, batch={B})")
    want = ref.score_grid_bytes(T, n_heads=H, batch=B)
    expect(got == want, f"score_grid_bytes({T}, n_heads={H}, batch={B})", f"{want:,} bytes", f"{got:,.0f}",
           BYTES_HINT)


@check("score_grid_bytes: uses the item size of the dtype", points=1)
def test_bytes_dtype(student, gen):
    T = int(torch.randint(50, 3000, (1,), generator=gen))
    for dtype in (torch.float16, torch.float64, torch.bfloat16):
        got = as_number(student.call("score_grid_bytes", T, dtype=dtype), f"score_grid_bytes({T}, dtype={dtype})")
        want = ref.score_grid_bytes(T, dtype=dtype)
        expect(got == want, f"score_grid_bytes({T}, dtype={dtype})", f"{want:,} bytes", f"{got:,.0f}",
               BYTES_HINT)


@waits
@diagnosed("time_call")
@check("time_call: warm-up calls are not timed", points=2)
def test_time_call_warmup(student, gen):
    for _run, first, fast, allowed in _slow_first_then_fast(gen):
        checked = (f"time_call(fn, repeats=1, warmup=1) where the first call takes {first:.3g} s and the others "
                   f"{fast:.3g} s")
        schedule = Schedule([first], fast)
        got = _time_call(student, schedule, 1, 1, checked)
        # Without a warm-up the one timed call is the slow one. The grader's clock decides the rest: under
        # load a correct timer may report far more than `fast`, but never more than the second call allows.
        expect(schedule.calls > 1, checked, f"about {fast:.3g} s (the first call is the untimed warm-up)",
               f"{got:.4g} s", WARMUP_HINT, lambda: _calls_picture(checked, schedule, 1, got, student))
        allowed(_expect_median_of_last(got, schedule, 1, student, checked, WARMUP_HINT))


@waits
@diagnosed("time_call")
@check("time_call: the median ignores one slow repeat", points=2)
def test_time_call_median(student, gen):
    for run, first, fast, allowed in _slow_first_then_fast(gen):
        checked = (f"time_call(fn, repeats=5, warmup=1) where the first timed call takes {first:.3g} s and the "
                   f"others {fast:.3g} s")
        for _attempt in range(MEDIAN_ATTEMPTS):
            schedule = Schedule([fast, first], fast)  # the slow one first after the warm-up: where a timer of one
            got = _time_call(student, schedule, 5, 1, checked)  # call looks, whatever durations were drawn
            if run == 1 or _median_told_from_mean(schedule, 5, student.last_request):
                break
        allowed(_expect_median_of_last(got, schedule, 5, student, checked, MEDIAN_HINT, also_of_all=True))


MEDIAN_ATTEMPTS = 3  # runs of the slow schedule at most, while a busy machine blurs the median into the mean


def _median_told_from_mean(schedule: Schedule, repeats: int, request: tuple[float, float]) -> bool:
    """Whether this run can tell a median from a mean: the timed calls' mean, by their own durations, lies
    above the most the grader's clock allows for their median. A busy machine stretches the gaps between
    calls, which that allowance must take in; when they swallow the slow call's share of the mean, the run
    is made again rather than judged, so that a mean fails on every run and a median passes."""
    timed = schedule.last(repeats)
    own = [schedule.call_seconds()[i] for i in timed]
    return statistics.fmean(own) > schedule.bracket(timed, request)[1]


@diagnosed("time_call")
@check("time_call: calls fn warmup + repeats times", points=1)
def test_time_call_count(student, gen):
    repeats, warmup = int(torch.randint(3, 6, (1,), generator=gen)), int(torch.randint(1, 3, (1,), generator=gen))
    schedule = Schedule([], 0.0)
    checked = f"time_call(fn, repeats={repeats}, warmup={warmup})"
    as_number(student.call("time_call", student.remote(schedule), repeats=repeats, warmup=warmup), checked)
    expect(schedule.calls == repeats + warmup, f"how often {checked} called fn", f"{repeats + warmup} times",
           f"{schedule.calls} times", _count_hint(schedule.calls, repeats, warmup))


def _count_hint(calls: int, repeats: int, warmup: int) -> str:
    """What calling fn `calls` times instead of warmup + repeats shows."""
    return WARMUP_HINT if calls == repeats else MEDIAN_HINT if calls == warmup + 1 else COUNT_HINT


def _expect_seconds(student, gen: torch.Generator) -> None:
    """time_call on two workloads of known cost, drawn from `gen`, reports seconds of the timed calls."""
    for _, seconds, allowed in _two_runs(gen, *UNITS):
        checked = f"time_call(fn, repeats=3, warmup=1) on a fn that takes {seconds:.3g} s"
        schedule = Schedule([], seconds)
        got = _time_call(student, schedule, 3, 1, checked)
        # Any statistic of the timed calls: this check is about units, the median has its own.
        low, high = schedule.bracket(schedule.last(3), student.last_request, statistic=None)
        expect(low <= got <= high, checked, f"about {seconds:.3g} (seconds, from time.perf_counter; between {low:.4g} "
               f"and {high:.4g} by the grader's clock)", f"{got:.4g}", CLOCK_HINT if got < low else UNITS_HINT,
               lambda: _calls_picture(checked, schedule, 3, got, student, (low, high)))
        allowed(high)


@pytest.fixture(scope="module")
def seconds_timed(student, module_gen, diagnoses) -> Failure | StudentError | None:
    """`_expect_seconds`, run once for the units check and, on the CPU, where there is nothing to
    synchronise with, for the synchronise check too: what it failed with (naming time_call's root cause,
    as both checks do), None when it held."""
    try:
        with root_cause(diagnoses["time_call"]):
            _expect_seconds(student, module_gen)
    except (Failure, StudentError) as exc:
        return exc
    return None


@waits
@diagnosed("time_call")
@check("time_call: returns seconds of a known workload", points=1)
def test_time_call_units(seconds_timed):
    if seconds_timed is not None:
        raise seconds_timed


class Counted(Served):
    """A workload that runs on the submission's side (GPU work): the grader only counts and clocks its calls."""

    def serve(self, seen: Seen) -> None:
        pass


@waits
@diagnosed("time_call")
@check("time_call: synchronises with the GPU before reading the clock", points=1)
def test_time_call_synchronises(student, gen, device, request):
    if device == "cpu":  # nothing to synchronise with: the units check's calls, timed as a correct timer times them
        failed = request.getfixturevalue("seconds_timed")
        if failed is not None:
            raise failed
        return
    seconds = uniform(gen, 0.03, 0.08)
    checked = f"time_call(fn, repeats=3, warmup=1) where fn does {seconds:.3g} s of work on {device}"
    # On a GPU the work is queued and the call returns at once: only a synchronised timer sees it.
    counted = Counted()
    got = as_number(student.call("time_call", student.local("gpu_sleep", seconds, counted), repeats=3, warmup=1), checked)
    expect(counted.calls == 4, f"how often {checked} called fn", "4 times", f"{counted.calls} times",
           _count_hint(counted.calls, 3, 1))
    expect(seconds / 2 <= got <= student.last_seconds, checked, f"about {seconds:.3g} s (at most {student.last_seconds:.4g} s, "
           "the whole call by the grader's clock)", f"{got:.4g} s", SYNC_HINT if got < seconds / 2 else UNITS_HINT)


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
    Ts, d_head = [start, 2 * start, 4 * start], int(torch.randint(8, 48, (1,), generator=module_gen))
    workload = Quadratic(uniform(module_gen, *SYNTHETIC_T2_SECONDS))
    try:
        times = student.call("time_attention", student.remote(workload), Ts, d_head=d_head, repeats=SYNTHETIC_REPEATS)
    except StudentError as exc:
        times = exc
    return Study(Ts, d_head, workload, times, student.last_request)


@waits
@diagnosed("time_call", "time_attention")
@check("time_attention: fresh (1, T, d_head) inputs for every T, one time per T", points=1)
def test_time_attention_inputs(study):
    study.valid_times()
    shapes = sorted({call.shapes for call in study.workload.seen})
    want = sorted(tuple([(1, T, study.d_head)] * 3) for T in study.Ts)
    expect(shapes == want, f"the shapes of q, k, v that {study.checked} passed to fn", f"{want}", f"{shapes}",
           FRESH_HINT)
    expect(all(call.distinct for call in study.workload.seen), f"q, k and v passed by {study.checked}",
           "three different random tensors", "the same tensor more than once", "q, k, v are three fresh random tensors")


def _expect_clocked_times(times: list[float], Ts: list[int], workload: Recorded, request: tuple[float, float],
                          checked: str, cost: str, most: int = 1) -> None:
    """Each T's time lies within what the grader's clock allows for its calls (any statistic of them: one
    T's calls all cost the same; up to `most` times that), so it holds however busy the machine is, and a
    made-up time does not."""
    def picture() -> list[dict]:
        allowed = [workload.bracket(workload.calls_with(T), request, statistic=None)
                   if len(workload.calls_with(T)) >= 2 else None for T in Ts]
        return [figures.loglog(f"{checked}, where fn takes {cost}", Ts, {"your times": times}, allowed=allowed)]

    for T, got in zip(Ts, times):
        calls, the_time = workload.calls_with(T), f"{checked}: the time for T = {T}, where fn takes {cost}"
        expect(len(calls) >= 2, the_time, "fn called on inputs of T tokens (a warm-up, then the timed calls)",
               f"{len(calls)} calls", EACH_T_HINT, picture)
        low, high = workload.bracket(calls, request, statistic=None)
        high *= most
        expect(low <= got <= high, the_time, f"between {low:.4g} and {high:.4g} s (the median of its timed calls, by the "
               f"grader's clock; times {[f'{t:.3g}' for t in times]})", f"{got:.4g} s",
               EACH_T_HINT, picture)


@diagnosed("time_call", "time_attention")
@check("time_attention: times grow as T² on a workload of cost T²", points=1)
def test_time_attention_quadratic(study):
    _expect_clocked_times(study.valid_times(), study.Ts, study.workload, study.request, study.checked,
                          f"{study.workload.per_token2:.3g} · T² s")


@check("fit_power_law: the slope of log(time) against log(T)", points=2)
def test_fit_power_law(student, gen):
    power = 1 + 2 * float(torch.rand(1, generator=gen))
    Ts = sorted(set(int(x) for x in torch.randint(16, 4096, (5,), generator=gen)))
    noise = 1 + 0.05 * torch.rand(len(Ts), generator=gen)
    times = [float(1e-6 * T**power * n) for T, n in zip(Ts, noise)]
    got = as_number(student.call("fit_power_law", Ts, times), f"fit_power_law(Ts={Ts}, times)")
    want = ref.fit_power_law(Ts, times)
    expect(math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-6), f"fit_power_law on times ∝ T^{power:.3f}",
           f"{want:.4f}", f"{got:.4f}", Hint(FIT_HINT, "the least-squares slope"),
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


@diagnosed("time_call", "time_attention")
@check("time_attention: a real study of materialised attention shows the T² cost", points=1)
def test_real_study(student):
    device = available_devices()[-1]  # the GPU when there is one, where a missing synchronise shows
    Ts = REAL_STUDY_TS[device]
    checked = f"time_attention(materialized attention, Ts={Ts}, device={device!r}, repeats={REAL_STUDY_REPEATS})"
    if device == "cpu":
        workload = RealAttention(Ts, REAL_STUDY_D_HEAD)
        times = student.call("time_attention", student.remote(workload), Ts, device=device, repeats=REAL_STUDY_REPEATS)
        _expect_study_times(times, Ts, checked)
        # Up to the total of its timed calls: at these sizes a busy machine's clock allows that in some runs and not
        # others; the median checks catch a total on every run. Here, measured times that grow as the work does.
        _expect_clocked_times(times, Ts, workload, student.last_request, checked, "what materialised attention takes",
                              most=REAL_STUDY_REPEATS)
        return
    counted = Counted()
    attention = student.local("attention", 0.0, counted)
    slopes, times, studies = [], [], {}
    picture = lambda: [figures.loglog(checked, Ts, studies)]  # noqa: E731
    for attempt in range(REAL_STUDY_ATTEMPTS):
        before = counted.calls
        times = student.call("time_attention", attention, Ts, device=device, repeats=REAL_STUDY_REPEATS)
        _expect_study_times(times, Ts, checked)
        expect(counted.calls - before >= 2 * len(Ts), f"how often {checked} called attn",
               f"at least {2 * len(Ts)} times (a warm-up and a timed call per T)", f"{counted.calls - before} times",
               EACH_T_HINT)
        studies[f"study {attempt + 1}"] = times
        floors = [4 * T * T * REAL_STUDY_D_HEAD / PEAK_FLOPS for T in Ts]
        expect(all(t >= f for t, f in zip(times, floors)) and sum(times) <= student.last_seconds, checked,
               f"times each above what the work takes at least and adding up to at most {student.last_seconds:.4g} s "
               "(the whole call, by the grader's clock)", f"{[f'{t:.3g}' for t in times]}",
               EACH_T_HINT, picture)
        slopes.append(ref.fit_power_law(Ts, times))
        # Wide band: a broken timer gives about 0 or 1.
        if 1.2 < slopes[-1] < 4.0:
            return
    fail(checked, "a log-log slope near 2 (doubling T quadruples the work)",
         f"slopes {[round(s, 2) for s in slopes]} in {len(slopes)} studies (last times {[f'{t:.3g}' for t in times]})",
         SYNC_HINT if max(slopes) < 1.2 else EACH_T_HINT,
         pictures(picture))


def _expect_study_times(times: Any, Ts: list[int], checked: str) -> None:
    if type(times) is not list or len(times) != len(Ts) or not all(type(t) is float for t in times):
        fail(checked, f"{len(Ts)} times (floats)", str(times)[:80])
