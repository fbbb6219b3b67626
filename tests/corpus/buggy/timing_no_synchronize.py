# part: timing
# hint: timing.synchronise
# needs: cuda
# why: time_call never calls torch.cuda.synchronize, so on a GPU it times only the kernel launch

def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
