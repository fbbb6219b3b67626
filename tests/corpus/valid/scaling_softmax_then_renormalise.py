# part: scaling
# why: softmax over all keys, then zero the masked weights and renormalise each row (same weights as masking first)

def attention_weights(scores, mask=None):
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
        weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights
