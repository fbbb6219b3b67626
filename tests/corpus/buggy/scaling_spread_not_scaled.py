# part: scaling
# hint: scaling.spread
# why: dot_product_spread ignores scaled=True and never divides by sqrt(d)

def dot_product_spread(d, n=10_000, *, scaled, generator=None):
    a = torch.randn(n, d, generator=generator)
    b = torch.randn(n, d, generator=generator)
    return (a * b).sum(dim=-1).std().item()
