# part: masks
# hint: masks.fill_where_false
# why: masked_fill(mask, -inf) with True = attend: the allowed scores are the ones removed

def apply_mask(scores, mask):
    return scores.masked_fill(mask, float("-inf"))
