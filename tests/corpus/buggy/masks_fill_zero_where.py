# part: masks
# hint: masks.fill_zero
# why: torch.where(mask, scores, 0): 0 is an ordinary score, so blocked keys keep weight

def apply_mask(scores, mask):
    return torch.where(mask, scores, torch.zeros_like(scores))
