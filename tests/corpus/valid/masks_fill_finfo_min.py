# part: masks
# why: fills blocked scores with torch.finfo(dtype).min; exp underflows to exactly 0

def apply_mask(scores, mask):
    return scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
