# part: scaling
# hint: scaling.no_scale
# why: scaled_dot_product_attention uses raw q k^T scores, forgetting the scale

def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k)
    weights = attention_weights(scores, mask)
    return weights @ v, weights
