# part: timing
# hint: timing.log_log
# why: least-squares slope of time against T (no logs): seconds per token, not an exponent

def fit_power_law(Ts, times):
    mx = sum(Ts) / len(Ts)
    my = sum(times) / len(times)
    num = sum((x - mx) * (y - my) for x, y in zip(Ts, times))
    den = sum((x - mx) ** 2 for x in Ts)
    return num / den
