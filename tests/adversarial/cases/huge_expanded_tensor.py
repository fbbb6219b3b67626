# why: causal_average returns a 1.6e9-element expand() of one number: the encoder must refuse it without materialising it
# earns: zero-on causal_average
# feedback: over the limit


def causal_average(T):
    return torch.ones(1).expand(40_000, 40_000)
