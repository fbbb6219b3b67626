# part: scaling
# why: an honest but slow style: scores, the masked softmax and the weighted sum written as Python loops over every entry (thousands of scalar operations per call, where tensor code does one): slow, and right, so it keeps full marks, also after a leash would apply

import itertools as _it


def _rows(t):
    """Every index of the leading dimensions of t (all but the last)."""
    return _it.product(*(range(n) for n in t.shape[:-1]))


def attention_scores(q, k):
    d = q.shape[-1]
    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])
    q, k = q.expand(*lead, *q.shape[-2:]), k.expand(*lead, *k.shape[-2:])
    out = torch.empty(*lead, q.shape[-2], k.shape[-2], dtype=q.dtype, device=q.device)
    for index in _it.product(*(range(n) for n in lead)):
        for i in range(q.shape[-2]):
            for j in range(k.shape[-2]):
                total = 0.0
                for f in range(d):
                    total += float(q[index + (i, f)]) * float(k[index + (j, f)])
                out[index + (i, j)] = total / math.sqrt(d)
    return out


def attention_weights(scores, mask=None):
    allowed = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand(scores.shape)
    out = torch.zeros_like(scores)
    for index in _rows(scores):
        row = [float(scores[index + (j,)]) for j in range(scores.shape[-1]) if allowed[index + (j,)]]
        top = max(row)
        total = sum(math.exp(x - top) for x in row)
        for j in range(scores.shape[-1]):
            if allowed[index + (j,)]:
                out[index + (j,)] = math.exp(float(scores[index + (j,)]) - top) / total
    return out


def scaled_dot_product_attention(q, k, v, mask=None):
    weights = attention_weights(attention_scores(q, k), mask)
    lead = weights.shape[:-2]
    v = v.expand(*lead, *v.shape[-2:])
    out = torch.zeros(*lead, weights.shape[-2], v.shape[-1], dtype=v.dtype, device=v.device)
    for index in _it.product(*(range(n) for n in lead)):
        for i in range(weights.shape[-2]):
            for f in range(v.shape[-1]):
                out[index + (i, f)] = sum(float(weights[index + (i, j)]) * float(v[index + (j, f)])
                                          for j in range(v.shape[-2]))
    return out, weights
