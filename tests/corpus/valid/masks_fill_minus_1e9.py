# part: masks
# why: fills blocked scores with -1e9 instead of -inf; the softmax weight still underflows to exactly 0

def apply_mask(scores, mask):
    return scores.masked_fill(mask == False, -1e9)
