# part: masks
# why: combines masks with torch.logical_and and explicit view/None indexing; padding mask via expand

def combine_masks(causal, padding):
    B, T = padding.shape
    return torch.logical_and(causal[None, None, :, :], padding.view(B, 1, 1, T))


def padding_mask(lengths, T):
    B = lengths.shape[0]
    idx = torch.arange(T, device=lengths.device).expand(B, T)
    return idx < lengths[:, None]
