# part: masks
# hint: masks.convention
# why: padding_mask keeps the contract, but combine_masks was written for key_padding_mask (True = pad) and uses causal & ~padding, so only the pads stay visible

def combine_masks(causal, padding):
    key_padding_mask = padding
    attn_mask = causal.unsqueeze(0).unsqueeze(1)
    return attn_mask & key_padding_mask.logical_not().view(padding.shape[0], 1, 1, -1)
