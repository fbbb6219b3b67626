"""Part `timing`: the timer on synthetic workloads of known cost, and the power-law fit.

Most timer tests replace the timing module's clock with a fake one that only
moves when the workload says so, so their results are exact on any machine.
"""

import math
import time
import types

import numpy as np
import pytest
import torch

import attention_ref.timing as timing
from attention_ref import fit_power_law, time_attention, time_call


class FakeClock:
    def __init__(self, log=None):
        self.now = 1000.0
        self.log = log

    def perf_counter(self):
        if self.log is not None:
            self.log.append("clock")
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=fake.perf_counter))
    return fake


class Workload:
    """A callable whose n-th call (from 0) advances the clock by costs[n] seconds."""

    def __init__(self, clock, costs, log=None):
        self.clock = clock
        self.costs = costs
        self.calls = 0
        self.log = log

    def __call__(self, *args):
        if self.log is not None:
            self.log.append("fn")
        self.clock.now += self.costs[self.calls]
        self.calls += 1


def test_time_call_excludes_a_slow_first_call_run_as_warmup(clock):
    work = Workload(clock, [50.0, 1.0, 1.0, 1.0])
    assert time_call(work, repeats=3, warmup=1) == pytest.approx(1.0)
    assert work.calls == 4


def test_time_call_counts_the_first_call_when_warmup_is_zero(clock):
    work = Workload(clock, [50.0])
    assert time_call(work, repeats=1, warmup=0) == pytest.approx(50.0)
    assert work.calls == 1


@pytest.mark.parametrize("warmup, repeats", [(0, 1), (2, 3), (3, 4), (1, 5)])
def test_time_call_calls_fn_warmup_plus_repeats_times(warmup, repeats, clock):
    work = Workload(clock, [1.0] * (warmup + repeats))
    time_call(work, repeats=repeats, warmup=warmup)
    assert work.calls == warmup + repeats


def test_time_call_returns_the_median_not_the_mean(clock):
    work = Workload(clock, [9.0, 3.0, 100.0, 2.0, 4.0, 1.0])
    # Timed calls cost 3, 100, 2, 4, 1: median 3, mean 22.
    assert time_call(work, repeats=5, warmup=1) == pytest.approx(3.0)


def test_time_call_median_of_an_even_count_is_the_middle_mean(clock):
    work = Workload(clock, [0.0, 1.0, 2.0, 10.0, 20.0])
    assert time_call(work, repeats=4, warmup=1) == pytest.approx(6.0)


def test_time_call_uses_the_defaults_of_five_repeats_and_one_warmup(clock):
    work = Workload(clock, [100.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    assert time_call(work) == pytest.approx(3.0)
    assert work.calls == 6


def test_time_call_passes_the_arguments_through(clock):
    seen = []
    time_call(lambda *args: seen.append(args), 1, "two", repeats=2, warmup=1)
    assert seen == [(1, "two")] * 3


def test_time_call_synchronises_before_starting_and_stopping_when_cuda_is_present(monkeypatch):
    log = []
    fake = FakeClock(log)
    monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=fake.perf_counter))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: log.append("sync"))
    work = Workload(fake, [1.0] * 3, log)
    time_call(work, repeats=2, warmup=1)
    start = log.index("clock") - 1
    # The warm-up call runs before the clock is ever read.
    assert log[:start].count("fn") == 1
    # Before each timed call: sync, then start the clock; after it: sync, then stop.
    assert log[start:] == ["sync", "clock", "fn", "sync", "clock"] * 2


def test_time_call_does_not_synchronise_without_cuda(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: calls.append("sync"))
    time_call(lambda: None, repeats=2, warmup=1)
    assert calls == []


def test_time_call_on_the_real_clock_skips_a_slow_first_call():
    calls = []

    def first_call_slow():
        calls.append(None)
        if len(calls) == 1:
            time.sleep(0.02)

    # Timed calls do nothing; 10 ms is a margin hundreds of times their cost.
    assert time_call(first_call_slow, repeats=3, warmup=1) < 0.01
    calls.clear()
    assert time_call(first_call_slow, repeats=1, warmup=0) >= 0.019


def test_time_attention_times_a_t_squared_workload_with_exponent_two(clock):
    def attn(q, k, v):
        T = q.shape[1]
        clock.now += 1e-6 * T * T

    Ts = [64, 128, 256, 512]
    times = time_attention(attn, Ts, repeats=3)
    assert isinstance(times, list) and len(times) == len(Ts)
    for T, seconds in zip(Ts, times):
        assert seconds == pytest.approx(1e-6 * T * T)
    assert fit_power_law(Ts, times) == pytest.approx(2.0, abs=1e-9)


@pytest.mark.parametrize("d_head", [64, 5])
def test_time_attention_passes_fresh_1_t_d_head_tensors_on_the_device(d_head, device):
    seen = []

    def attn(q, k, v):
        seen.append((q, k, v))

    Ts = [3, 17]
    repeats = 2
    times = time_attention(attn, Ts, d_head=d_head, device=device, repeats=repeats)
    assert len(times) == 2 and all(isinstance(t, float) and t >= 0 for t in times)
    # One warm-up call and `repeats` timed calls per T.
    assert len(seen) == len(Ts) * (1 + repeats)
    for index, (q, k, v) in enumerate(seen):
        T = Ts[index // (1 + repeats)]
        for tensor in (q, k, v):
            assert tensor.shape == (1, T, d_head)
            assert tensor.device.type == device
            assert tensor.dtype == torch.float32
        # q, k and v are distinct random draws.
        assert not torch.equal(q, k) and not torch.equal(k, v) and not torch.equal(q, v)


def test_time_attention_uses_the_default_d_head_and_repeats(clock):
    shapes = []

    def attn(q, k, v):
        shapes.append(tuple(q.shape))
        clock.now += 1.0

    time_attention(attn, [4])
    assert shapes == [(1, 4, 64)] * 6


# fit_power_law


@pytest.mark.parametrize("exponent", [2.0, 1.0, 2.37, 0.0, 3.0])
def test_fit_power_law_recovers_a_known_exponent(exponent):
    Ts = [1000, 2000, 4000, 8000]
    times = [3e-7 * T**exponent for T in Ts]
    assert fit_power_law(Ts, times) == pytest.approx(exponent, abs=1e-9)


def test_fit_power_law_is_the_least_squares_slope_of_noisy_data():
    rng = np.random.default_rng(7)
    Ts = np.array([128, 256, 512, 1024, 2048])
    times = 2e-8 * Ts**2.0 * np.exp(rng.normal(0, 0.2, size=Ts.size))
    expected = np.polyfit(np.log(Ts), np.log(times), 1)[0]
    got = fit_power_law(Ts.tolist(), times.tolist())
    assert isinstance(got, float)
    assert got == pytest.approx(expected, abs=1e-9)
    assert got != pytest.approx(2.0, abs=1e-6)  # the noise moved it


def test_fit_power_law_accepts_tuples_and_two_points():
    assert fit_power_law((10, 20), (1.0, 8.0)) == pytest.approx(math.log(8) / math.log(2))
