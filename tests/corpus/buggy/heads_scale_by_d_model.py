# part: heads
# hint: scaling.head_dimension
# why: the module computes its own scores divided by sqrt(d_model) instead of sqrt(d_head) (a scaling-table row whose code is in the module)

class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(self.d_model, dim=-1)
        q, k, v = [split_heads(t, self.n_heads) for t in (q, k, v)]
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)
        weights = attention_weights(scores, causal_mask(T, device=x.device))
        return self.proj(merge_heads(weights @ v)), weights
