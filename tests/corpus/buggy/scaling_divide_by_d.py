# part: scaling
# hint: scaling.sqrt_d_not_d
# why: attention_scores divides by d instead of sqrt(d)

def attention_scores(q, k):
    d = q.shape[-1]
    return q @ k.transpose(-2, -1) / d
