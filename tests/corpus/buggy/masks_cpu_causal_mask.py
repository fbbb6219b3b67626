# part: masks
# hint: masks.on_device
# needs: cuda
# why: causal_mask ignores device= and always builds the mask on the CPU

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return torch.tril(torch.ones(T_q, T_k, dtype=torch.bool))
