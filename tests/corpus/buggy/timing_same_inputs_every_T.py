# part: timing
# hint: timing.fresh
# why: makes q, k, v once, for the first T, and times those same inputs for every T of the study

def time_attention(attn, Ts, *, d_head=64, device="cpu", repeats=5):
    q, k, v = (torch.randn(1, Ts[0], d_head, device=device) for _ in range(3))
    return [time_call(attn, q, k, v, repeats=repeats) for _ in Ts]
