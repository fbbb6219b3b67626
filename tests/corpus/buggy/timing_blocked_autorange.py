# part: timing
# hint: timing.count
# why: times fn with torch.utils.benchmark.Timer.blocked_autorange, which returns seconds (the median of its blocks) but runs fn as often as it likes, whatever repeats says

from torch.utils import benchmark


def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)
    timer = benchmark.Timer(stmt="fn(*args)", globals={"fn": fn, "args": args})
    return timer.blocked_autorange(min_run_time=0.05).median
