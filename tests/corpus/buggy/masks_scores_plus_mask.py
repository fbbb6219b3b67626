# part: masks
# hint: masks.arithmetic
# why: returns scores + mask: allowed scores shift by 1 and nothing is blocked

def apply_mask(scores, mask):
    return scores + mask
