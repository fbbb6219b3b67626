# part: masks
# hint: masks.convention
# why: nn.MultiheadAttention key_padding_mask convention throughout: padding_mask is True on the pads (a cumsum count past the length) and combine_masks removes them with ~padding

def padding_mask(lengths, T):
    counts = torch.ones(lengths.shape[0], T, dtype=torch.long, device=lengths.device).cumsum(dim=1)
    return counts > lengths.unsqueeze(1)


def combine_masks(causal, padding):
    return causal[None, None, :, :] & ~padding[:, None, None, :]
