# part: masks
# hint: build a fill, not arithmetic on booleans
# why: returns scores + mask: allowed scores shift by 1 and nothing is blocked

def apply_mask(scores, mask):
    return scores + mask
