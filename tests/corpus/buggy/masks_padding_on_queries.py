# part: masks
# hint: masks.on_queries
# why: combine_masks puts padding on the query axis (B,1,T,1), so padded keys stay visible to real queries

def combine_masks(causal, padding):
    return causal[None, None, :, :] & padding[:, None, :, None]
