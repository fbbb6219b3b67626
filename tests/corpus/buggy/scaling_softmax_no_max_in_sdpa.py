# part: scaling
# hint: scaling.max
# why: scaled_dot_product_attention normalises exp(scores) by hand without subtracting the max

def scaled_dot_product_attention(q, k, v, mask=None):
    scores = attention_scores(q, k)
    if mask is not None:
        scores = apply_mask(scores, mask)
    e = scores.exp()
    weights = e / e.sum(-1, keepdim=True)
    return weights @ v, weights
