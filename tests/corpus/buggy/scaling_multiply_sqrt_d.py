# part: scaling
# hint: scaling.divide_not_multiply
# why: attention_scores multiplies by sqrt(d) instead of dividing

def attention_scores(q, k):
    d = q.shape[-1]
    return q @ k.transpose(-2, -1) * math.sqrt(d)
