# part: scaling
# hint: scaling.k_transpose
# why: k.T reverses every axis of a batched tensor: a shape error on 4-D inputs (right only in 2-D)

def attention_scores(q, k):
    d = q.shape[-1]
    return q @ k.T / math.sqrt(d)
