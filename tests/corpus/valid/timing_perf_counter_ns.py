# part: timing
# why: time_call with time.perf_counter_ns and an explicit torch.cuda.synchronize on both sides of each timed call

def time_call(fn, *args, repeats=5, warmup=1):
    use_cuda = torch.cuda.is_available()
    for _ in range(warmup):
        fn(*args)
    samples = []
    for _ in range(repeats):
        if use_cuda:
            torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        fn(*args)
        if use_cuda:
            torch.cuda.synchronize()
        t1 = time.perf_counter_ns()
        samples.append((t1 - t0) / 1e9)
    return statistics.median(samples)
