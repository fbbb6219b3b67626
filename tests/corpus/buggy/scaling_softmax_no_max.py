# part: scaling
# hint: scaling.max
# why: hand-written softmax exp(s) / sum exp(s) overflows to inf/NaN for scores above about 88

def attention_weights(scores, mask=None):
    if mask is not None:
        scores = apply_mask(scores, mask)
    e = torch.exp(scores)
    return e / e.sum(dim=-1, keepdim=True)
