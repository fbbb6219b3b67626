# part: scaling
# hint: scaling.xlogy
# why: entropy as -(p * log p).sum(): 0 * log 0 = 0 * -inf gives NaN on masked weights

def softmax_entropy(weights):
    return -(weights * torch.log(weights)).sum(dim=-1)
