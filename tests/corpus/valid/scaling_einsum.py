# part: scaling
# why: scores and the weighted sum of values written with torch.einsum

def attention_scores(q, k):
    d = q.shape[-1]
    return torch.einsum("...qd,...kd->...qk", q, k) / math.sqrt(d)


def scaled_dot_product_attention(q, k, v, mask=None):
    weights = attention_weights(attention_scores(q, k), mask)
    out = torch.einsum("...qk,...kd->...qd", weights, v)
    return out, weights
