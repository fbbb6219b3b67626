# part: timing
# hint: timing.synchronise
# needs: cuda
# why: synchronises before starting the clock but not before stopping it: the queued GPU work is not waited for

def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
