# part: masks
# why: turns the boolean mask into an additive 0/-inf float mask and adds it (allowed scores + 0 stay unchanged)

def apply_mask(scores, mask):
    additive = torch.zeros(mask.shape, dtype=scores.dtype, device=scores.device)
    additive = additive.masked_fill(~mask, float("-inf"))
    return scores + additive
