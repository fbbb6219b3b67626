# part: masks
# hint: masks.arithmetic
# why: returns scores * mask: blocked scores become 0, which is not a block

def apply_mask(scores, mask):
    return scores * mask
