# part: heads
# why: module splits qkv with chunk(3) and computes the output with F.scaled_dot_product_attention(is_causal=True); weights from the part-2 functions

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (split_heads(t, self.n_heads) for t in (q, k, v))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        weights = attention_weights(attention_scores(q, k), causal_mask(T, device=x.device))
        return self.proj(merge_heads(out)), weights
