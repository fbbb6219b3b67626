# part: masks
# why: builds the causal mask and the causal average from torch.arange comparisons instead of tril

def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    if T_q < 0 or T_k < 0:
        raise ValueError("sequence lengths must be non-negative")
    rows = torch.arange(T_q, device=device).unsqueeze(1)
    cols = torch.arange(T_k, device=device).unsqueeze(0)
    return cols <= rows


def causal_average(T):
    rows = torch.arange(T).unsqueeze(1)
    cols = torch.arange(T).unsqueeze(0)
    return (cols <= rows).float() / (rows + 1).float()
