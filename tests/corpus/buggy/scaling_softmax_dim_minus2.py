# part: scaling
# hint: scaling.dim
# why: softmax over dim=-2: columns (queries) sum to 1 instead of rows

def attention_weights(scores, mask=None):
    if mask is not None:
        scores = apply_mask(scores, mask)
    return torch.softmax(scores, dim=-2)
