# part: heads
# hint: masks.on_device
# needs: cuda
# why: forward builds its causal mask with causal_mask(T), on the CPU, whatever the device of x (a masks-table row whose code is in the module)

class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.qkv(x).split(self.d_model, dim=-1)
        q, k, v = [split_heads(t, self.n_heads) for t in (q, k, v)]
        out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T))
        return self.proj(merge_heads(out)), weights
