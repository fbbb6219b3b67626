# part: timing
# hint: timing.median
# why: one clock around the whole loop divided by repeats: a mean in disguise, dragged up by the outlier

def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    _sync()
    start = time.perf_counter()
    for _ in range(repeats):
        fn(*args)
    _sync()
    return (time.perf_counter() - start) / repeats
