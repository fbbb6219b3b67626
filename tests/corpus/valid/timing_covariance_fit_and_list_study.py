# part: timing
# why: fit_power_law with statistics.covariance/variance; time_attention as a list comprehension

def fit_power_law(Ts, times):
    xs = [math.log(T) for T in Ts]
    ys = [math.log(t) for t in times]
    return statistics.covariance(xs, ys) / statistics.variance(xs)


def time_attention(attn, Ts, *, d_head=64, device="cpu", repeats=5):
    def one(T):
        q, k, v = (torch.randn(1, T, d_head, device=device) for _ in range(3))
        return time_call(attn, q, k, v, repeats=repeats)
    return [one(T) for T in Ts]
