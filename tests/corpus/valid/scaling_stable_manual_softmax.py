# part: scaling
# why: hand-written softmax that subtracts the row max before exp

def attention_weights(scores, mask=None):
    if mask is not None:
        scores = apply_mask(scores, mask)
    row_max = scores.max(dim=-1, keepdim=True).values
    e = torch.exp(scores - row_max)
    return e / e.sum(dim=-1, keepdim=True)
