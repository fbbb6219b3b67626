# part: timing
# hint: timing.units
# why: reports milliseconds, the unit a profiler prints, where the contract asks for seconds

def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        _sync()
        start = time.perf_counter()
        fn(*args)
        _sync()
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)
