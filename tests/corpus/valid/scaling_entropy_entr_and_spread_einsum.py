# part: scaling
# why: entropy via torch.special.entr (0 at p = 0); spread from the same draws with einsum and the population std

def softmax_entropy(weights):
    return torch.special.entr(weights).sum(dim=-1)


def dot_product_spread(d, n=10_000, *, scaled, generator=None):
    a = torch.randn(n, d, generator=generator)
    b = torch.randn(n, d, generator=generator)
    dots = torch.einsum("nd,nd->n", a, b)
    std = dots.std(unbiased=False).item()
    return std / math.sqrt(d) if scaled else std
