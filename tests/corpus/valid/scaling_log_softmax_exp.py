# part: scaling
# why: weights as exp(log_softmax(scores)) after a -1e9 fill; the sdpa wrapper calls the pieces in one line

def attention_weights(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.log_softmax(scores, dim=-1).exp()


def scaled_dot_product_attention(q, k, v, mask=None):
    w = attention_weights(attention_scores(q, k), mask)
    return torch.matmul(w, v), w
