# part: timing
# why: the standard library's benchmark: timeit.repeat with number=1 times each of the `repeats` calls (perf_counter, wall-clock seconds) after the warm-up calls, and the median of those

import timeit


def time_call(fn, *args, repeats=5, warmup=1):
    for _ in range(warmup):
        fn(*args)

    def once():
        _sync()
        fn(*args)
        _sync()

    return statistics.median(timeit.repeat(once, repeat=repeats, number=1))
