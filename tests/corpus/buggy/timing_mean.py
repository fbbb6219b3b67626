# part: timing
# hint: timing.median
# why: returns the mean of the timed calls, which one outlier drags up

def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        _sync()
        start = time.perf_counter()
        fn(*args)
        _sync()
        times.append(time.perf_counter() - start)
    return statistics.mean(times)
