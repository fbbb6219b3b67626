# part: timing
# hint: timing.warmup
# why: ignores warmup: the first (slow) call is one of the timed ones and fn runs only `repeats` times

def time_call(fn, *args, repeats=5, warmup=1):
    times = []
    for _ in range(repeats):
        _sync()
        start = time.perf_counter()
        fn(*args)
        _sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
