# part: masks
# hint: create masks on the input's device
# needs: cuda
# why: causal_mask ignores device= and always builds the mask on the CPU

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    return torch.tril(torch.ones(T_q, T_k, dtype=torch.bool))
