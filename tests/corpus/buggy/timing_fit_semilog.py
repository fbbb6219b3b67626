# part: timing
# hint: timing.log_log
# why: fits log(time) against T instead of log(T)

def fit_power_law(Ts, times):
    xs = list(Ts)
    ys = [math.log(t) for t in times]
    mx = sum(xs) / len(xs)
    my = sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
