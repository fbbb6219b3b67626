# part: scaling
# hint: masks.renormalise
# why: scaled_dot_product_attention zeroes masked weights after softmax and never renormalises (a masks-table row; the code is in sdpa)

def scaled_dot_product_attention(q, k, v, mask=None):
    weights = torch.softmax(attention_scores(q, k), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
