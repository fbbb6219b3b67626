# part: heads
# hint: heads.qkv_order
# why: the fused projection is unpacked as [k | q | v]

class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x):
        T = x.shape[1]
        k, q, v = self.qkv(x).split(self.d_model, dim=-1)
        q, k, v = [split_heads(t, self.n_heads) for t in (q, k, v)]
        out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T, device=x.device))
        return self.proj(merge_heads(out)), weights
