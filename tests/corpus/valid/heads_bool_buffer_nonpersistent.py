# part: heads
# why: a boolean tril buffer registered with persistent=False and sliced to [:T, :T]; qkv cut with chunk(3); heads by reshape + permute(0, 2, 1, 3); blocked scores filled with torch.finfo(dtype).min

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"{d_model} features cannot be shared evenly by {n_heads} heads")
        self.d_model, self.n_heads = d_model, n_heads
        self.head_dim = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        limit = 512
        self.register_buffer("allowed", torch.ones(limit, limit, dtype=torch.bool).tril(), persistent=False)

    def _heads(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.n_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (self._heads(t) for t in self.qkv(x).chunk(3, dim=-1))
        scores = torch.matmul(q, k.transpose(-1, -2)) / self.head_dim ** 0.5
        scores = scores.masked_fill(~self.allowed[:T, :T], torch.finfo(scores.dtype).min)
        probs = scores.softmax(dim=-1)
        mixed = torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(B, T, D)
        return self.proj(mixed), probs
