# part: scaling
# why: F.softmax instead of torch.softmax, mask applied with masked_fill inline, k.mT and d ** 0.5

def attention_scores(q, k):
    return (q @ k.mT) / q.size(-1) ** 0.5


def attention_weights(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return F.softmax(scores, dim=-1)
