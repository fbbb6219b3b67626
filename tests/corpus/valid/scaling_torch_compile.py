# part: scaling
# why: the score and attention functions wrapped in torch.compile, as the PyTorch 2 tutorials show


@torch.compile
def attention_scores(q, k):
    return torch.matmul(q, k.mT) * q.shape[-1] ** -0.5


@torch.compile(dynamic=True)
def scaled_dot_product_attention(q, k, v, mask=None):
    weights = attention_weights(attention_scores(q, k), mask)
    return torch.matmul(weights, v), weights
