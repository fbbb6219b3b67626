# part: scaling
# hint: scaling.sqrt_d_not_d
# why: scaled_dot_product_attention computes its own scores divided by d

def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-2, -1)) / q.shape[-1]
    weights = attention_weights(scores, mask)
    return weights @ v, weights
