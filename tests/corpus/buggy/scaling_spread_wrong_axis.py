# part: scaling
# hint: scaling.spread
# why: sums the products over the n samples (dim=0) and takes the std of the d sums, which is about sqrt(n)

def dot_product_spread(d, n=10_000, *, scaled, generator=None):
    a = torch.randn(n, d, generator=generator)
    b = torch.randn(n, d, generator=generator)
    dots = (a * b).sum(dim=0)
    spread = dots.std().item()
    if scaled:
        spread /= math.sqrt(d)
    return spread
