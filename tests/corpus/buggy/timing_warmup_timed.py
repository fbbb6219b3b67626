# part: timing
# hint: timing.warmup
# why: runs warmup + repeats calls but keeps every duration, so the warm-up call is in the median

def time_call(fn, *args, repeats=5, warmup=1):
    times = []
    for _ in range(warmup + repeats):
        _sync()
        start = time.perf_counter()
        fn(*args)
        _sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
