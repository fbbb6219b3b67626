# part: timing
# hint: timing.total
# why: adds up the timed calls and returns the total, repeats times one call's time

def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    total = 0.0
    for _ in range(repeats):
        _sync()
        start = time.perf_counter()
        fn(*args)
        _sync()
        total += time.perf_counter() - start
    return total
