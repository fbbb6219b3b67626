# part: masks
# hint: masks.pure
# why: apply_mask uses masked_fill_ and returns the caller's scores tensor, modified in place

def apply_mask(scores, mask):
    scores.masked_fill_(~mask, float("-inf"))
    return scores
