# part: timing
# hint: timing.median
# why: times a single call after the warm-up and ignores repeats

def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    _sync()
    start = time.perf_counter()
    fn(*args)
    _sync()
    return time.perf_counter() - start
