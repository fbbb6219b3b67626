# part: heads
# why: The Annotated Transformer's MultiHeadedAttention shape: module-level attention(query, key, value, mask, dropout) with masked_fill(mask == 0, -1e9), a uint8 subsequent_mask, self.attn kept on the module, nn.Dropout(p=0.0), and its assert turned into a ValueError

def subsequent_mask(size, device=None):
    """(1, size, size): True where a position may look (itself and the past)."""
    upper = torch.triu(torch.ones((1, size, size), device=device), diagonal=1).type(torch.uint8)
    return upper == 0


def attention(query, key, value, mask=None, dropout=None):
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        try:
            assert d_model % n_heads == 0, f"d_model={d_model} is not divisible by n_heads={n_heads}"
        except AssertionError as err:
            raise ValueError(str(err)) from None
        self.d_k = d_model // n_heads
        self.h = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn = None
        self.dropout = nn.Dropout(p=0.0)

    def forward(self, x):
        nbatches, T, _ = x.shape
        mask = subsequent_mask(T, device=x.device).unsqueeze(1)
        query, key, value = [
            part.view(nbatches, -1, self.h, self.d_k).transpose(1, 2) for part in self.qkv(x).chunk(3, dim=-1)
        ]
        out, self.attn = attention(query, key, value, mask=mask, dropout=self.dropout)
        out = out.transpose(1, 2).contiguous().view(nbatches, -1, self.h * self.d_k)
        return self.proj(out), self.attn
