# part: scaling
# hint: masks.renormalise
# why: softmax over all keys, then multiplies by the mask without renormalising: masked rows sum below 1 (docs/mistakes.md lists this row under masks, but it can only live in attention_weights)

def attention_weights(scores, mask=None):
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights
