# part: scaling
# hint: scaling.k_transpose
# why: k.transpose(1, 2) is the key transpose only for 3-D inputs; on (B, H, T, d) it swaps heads and time

def attention_scores(q, k):
    d = q.shape[-1]
    return q @ k.transpose(1, 2) / math.sqrt(d)
