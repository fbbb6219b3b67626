# part: scaling
# hint: scaling.spread
# why: takes the std of all n*d elementwise products instead of the n dot products, so about 1 unscaled

def dot_product_spread(d, n=10_000, *, scaled, generator=None):
    a = torch.randn(n, d, generator=generator)
    b = torch.randn(n, d, generator=generator)
    spread = (a * b).std().item()
    if scaled:
        spread = spread / math.sqrt(d)
    return spread
