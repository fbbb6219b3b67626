# part: heads
# why: nanoGPT layout: a persistent float tril buffer `bias` (1, 1, block_size, block_size) sliced to [:, :, :T, :T], attn/resid nn.Dropout(0.0), q/k/v by split(n_embd, dim=2) and view(...).transpose(1, 2)

class CausalSelfAttention(nn.Module):
    block_size = 1024  # longest sequence the causal buffer covers

    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"n_embd={d_model} must be a multiple of n_head={n_heads}")
        self.n_embd = d_model
        self.n_head = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(0.0)
        self.resid_dropout = nn.Dropout(0.0)
        n = self.block_size
        self.register_buffer("bias", torch.tril(torch.ones(n, n)).view(1, 1, n, n))

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.n_head
        q, k, v = self.qkv(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = self.attn_dropout(att) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.proj(y)), att
