# part: scaling
# why: The Annotated Transformer's attention(query, key, value, mask, dropout) with masked_fill(mask == 0, -1e9); the contract's names are lambdas around it

def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


attention_scores = lambda q, k: torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.size(-1))  # noqa: E731
attention_weights = lambda scores, mask=None: (  # noqa: E731
    scores if mask is None else scores.masked_fill(mask == 0, -1e9)).softmax(dim=-1)
scaled_dot_product_attention = lambda q, k, v, mask=None: attention(q, k, v, mask)  # noqa: E731
