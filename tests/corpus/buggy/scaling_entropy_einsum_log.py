# part: scaling
# hint: scaling.xlogy
# why: entropy via einsum of p with p.log(): NaN as soon as one weight is exactly 0

def softmax_entropy(weights):
    return -torch.einsum("...t,...t->...", weights, weights.log())
