# part: masks
# hint: 0 is a score, not a block: use -inf
# why: blocked scores are set to 0, which still gets softmax weight

def apply_mask(scores, mask):
    return scores.masked_fill(~mask, 0.0)
