# part: scaling
# hint: scaling.divide_not_multiply
# why: scaled_dot_product_attention multiplies its scores by d ** 0.5

def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** 0.5
    weights = attention_weights(scores, mask)
    return weights @ v, weights
