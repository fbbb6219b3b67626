# part: scaling
# why: attention_weights is an instance of a callable masked-softmax class, attention_scores a functools.partial, softmax_entropy a lambda, dot_product_spread built from nested functions

import functools


class MaskedSoftmax:
    """Row softmax over the keys; blocked entries get `fill` first (max subtracted for stability)."""

    def __init__(self, fill=float("-inf")):
        self.fill = fill

    def __call__(self, scores, mask=None):
        if mask is not None:
            scores = torch.where(mask, scores, torch.full_like(scores, self.fill))
        shifted = scores - scores.amax(dim=-1, keepdim=True)
        e = shifted.exp()
        return e / e.sum(dim=-1, keepdim=True)


def _scaled_dot(q, k, *, temperature=None):
    temperature = math.sqrt(q.shape[-1]) if temperature is None else temperature
    return (q / temperature) @ k.transpose(-2, -1)


attention_weights = MaskedSoftmax()
attention_scores = functools.partial(_scaled_dot, temperature=None)
softmax_entropy = lambda weights: -torch.xlogy(weights, weights).sum(dim=-1)  # noqa: E731


def dot_product_spread(d, n=10_000, *, scaled, generator=None):
    def draw():
        return torch.randn(n, d, generator=generator)

    def spread(values):
        return float(values.std())

    s = spread((draw() * draw()).sum(dim=-1))
    return s / math.sqrt(d) if scaled else s
