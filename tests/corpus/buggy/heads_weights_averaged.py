# part: heads
# hint: heads.per_head
# why: returns the weights averaged over the heads, (B, T, T), as nn.MultiheadAttention does by default (average_attn_weights=True)

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = (split_heads(t, self.n_heads) for t in self.qkv(x).chunk(3, dim=-1))
        out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T, device=x.device))
        return self.proj(merge_heads(out)), weights.mean(dim=1)
