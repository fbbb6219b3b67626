# part: scaling
# hint: scaling.last_dimension
# why: d taken as q.size(-2), the number of queries; right only when T_q == d

def attention_scores(q, k):
    d = q.size(-2)
    return q @ k.transpose(-2, -1) / d ** 0.5
