# part: timing
# hint: timing.clock
# why: reads time.process_time(), this process's CPU time, so a call that waits (on a GPU, or on a sleep) seems to cost nothing

def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        _sync()
        start = time.process_time()
        fn(*args)
        _sync()
        times.append(time.process_time() - start)
    return statistics.median(times)
