# part: masks
# hint: masks.average
# why: causal_average left as a zeros placeholder of the right shape (the mask's diagonal is not the mistake)

def causal_average(T):
    return torch.zeros(T, T)
