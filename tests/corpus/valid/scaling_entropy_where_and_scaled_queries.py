# part: scaling
# why: entropy with torch.where(p > 0, p log p, 0); queries divided by sqrt(d) before the matmul

def softmax_entropy(weights):
    plogp = torch.where(weights > 0, weights * torch.log(weights), torch.zeros_like(weights))
    return -plogp.sum(dim=-1)


def attention_scores(q, k):
    d = q.shape[-1]
    return torch.matmul(q / math.sqrt(d), k.transpose(-1, -2))
