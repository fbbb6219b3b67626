# part: masks
# hint: masks.pure
# why: apply_mask writes -inf into the caller's scores by boolean index assignment

def apply_mask(scores, mask):
    scores[~mask.expand_as(scores)] = float("-inf")
    return scores
