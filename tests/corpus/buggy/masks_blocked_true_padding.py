# part: masks
# hint: masks.convention
# why: padding_mask is True on the padded positions (key_padding_mask convention)

def padding_mask(lengths, T):
    positions = torch.arange(T, device=lengths.device)
    return positions.unsqueeze(0) >= lengths.unsqueeze(1)
