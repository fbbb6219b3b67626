# part: masks
# why: torch.where(mask, scores, -inf) instead of masked_fill

def apply_mask(scores, mask):
    return torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype, device=scores.device))
