# part: scaling
# hint: scaling.last_dimension
# why: d taken as k.shape[-2], the number of keys; right only when T_k == d

def attention_scores(q, k):
    d = k.shape[-2]
    return q @ k.transpose(-2, -1) / math.sqrt(d)
