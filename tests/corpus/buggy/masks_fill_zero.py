# part: masks
# hint: masks.fill_zero
# why: blocked scores are set to 0, which still gets softmax weight

def apply_mask(scores, mask):
    return scores.masked_fill(~mask, 0.0)
