# part: scaling
# why: torch.matmul scores times d ** -0.5; blocked scores filled with torch.finfo(dtype).min; softmax computed in float32 (dtype=torch.float32) and cast back to the scores' dtype

def attention_scores(q, k):
    return torch.matmul(q, k.transpose(-1, -2)) * q.size(-1) ** -0.5


def attention_weights(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), torch.finfo(scores.dtype).min)
    probs = F.softmax(scores, dim=-1, dtype=torch.float32)
    return probs.to(scores.dtype)
