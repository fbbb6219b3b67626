# part: heads
# why: the student's own scaled_dot_product_attention takes an extra keyword is_causal (SPEC allows it), and their module calls it with is_causal=True: while heads is graded that call is served by the student's function, not refused by the reference's

def scaled_dot_product_attention(q, k, v, mask=None, *, is_causal=False):
    if is_causal:
        mask = causal_mask(q.shape[-2], k.shape[-2], device=q.device)
    weights = attention_weights(attention_scores(q, k), mask)
    return weights @ v, weights


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        q, k, v = (split_heads(t, self.n_heads) for t in self.qkv(x).chunk(3, dim=-1))
        out, weights = scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(merge_heads(out)), weights
