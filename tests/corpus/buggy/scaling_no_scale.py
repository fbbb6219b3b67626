# part: scaling
# hint: scaling.no_scale
# why: attention_scores returns the raw dot products, unscaled

def attention_scores(q, k):
    return q @ k.transpose(-2, -1)
