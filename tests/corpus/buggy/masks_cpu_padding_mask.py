# part: masks
# hint: masks.on_device
# needs: cuda
# why: padding_mask builds its arange on the CPU, so comparing with CUDA lengths fails

def padding_mask(lengths, T):
    positions = torch.arange(T)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)
