# part: heads
# hint: heads.layout
# why: no self.proj: the merged heads are returned directly (12,480 parameters at d_model=64)

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        self.d_model = d_model
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).split(self.d_model, dim=-1)
        q, k, v = [split_heads(t, self.n_heads) for t in (q, k, v)]
        out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T, device=x.device))
        return merge_heads(out), weights
