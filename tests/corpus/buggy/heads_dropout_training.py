# part: heads
# hint: heads.dropout
# why: nanoGPT-style nn.Dropout(0.1) on the attention weights and on the output; a module is in training mode until .eval(), so every call drops a random tenth and scales the rest by 1/0.9

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.1):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(self.d_model, dim=-1)
        q = split_heads(q, self.n_heads)
        k = split_heads(k, self.n_heads)
        v = split_heads(v, self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])
        scores = scores.masked_fill(~causal_mask(T, device=x.device), float("-inf"))
        weights = self.attn_dropout(torch.softmax(scores, dim=-1))
        out = merge_heads(weights @ v)
        return self.resid_dropout(self.proj(out)), weights
