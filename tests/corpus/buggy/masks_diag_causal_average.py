# part: masks
# hint: masks.itself
# why: causal_average uses tril(-1): row i averages columns 0..i-1 only and row 0 is all zero

def causal_average(T):
    ones = torch.tril(torch.ones(T, T), diagonal=-1)
    return ones / torch.arange(1, T + 1).unsqueeze(1)
