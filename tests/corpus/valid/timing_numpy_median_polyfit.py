# part: timing
# why: samples kept in a numpy array, time_call returns np.median(samples) and fit_power_law the slope of np.polyfit(log T, log t, 1): both numpy.float64, a subclass of Python float

import numpy as np


def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    samples = np.empty(repeats)
    for r in range(repeats):
        _sync()
        t0 = time.perf_counter()
        fn(*args)
        _sync()
        samples[r] = time.perf_counter() - t0
    return np.median(samples)


def fit_power_law(Ts, times):
    slope, _intercept = np.polyfit(np.log(Ts), np.log(times), deg=1)
    return slope
