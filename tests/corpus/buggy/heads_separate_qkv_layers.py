# part: heads
# hint: heads.layout
# why: three separate nn.Linear layers self.q, self.k, self.v instead of one fused self.qkv (same count, missing qkv)

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        self.n_heads = n_heads
        self.q = nn.Linear(d_model, d_model)
        self.k = nn.Linear(d_model, d_model)
        self.v = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        T = x.shape[1]
        q = split_heads(self.q(x), self.n_heads)
        k = split_heads(self.k(x), self.n_heads)
        v = split_heads(self.v(x), self.n_heads)
        out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T, device=x.device))
        return self.proj(merge_heads(out)), weights
