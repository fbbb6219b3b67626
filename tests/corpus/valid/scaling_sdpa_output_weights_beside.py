# part: scaling
# why: the output comes from F.scaled_dot_product_attention(q, k, v, attn_mask=mask) (same True = attend convention); the weights are computed beside it for the return value

def scaled_dot_product_attention(q, k, v, mask=None):
    output = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    weights = attention_weights(attention_scores(q, k), mask)
    return output, weights
