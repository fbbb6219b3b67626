# part: heads
# hint: heads.qkv_order
# why: qkv output viewed per head as (H, 3*dh) and split [q_h | k_h | v_h] inside each head (GPT-NeoX layout)

class CausalSelfAttention(CausalSelfAttention):
    def forward(self, x):
        B, T, D = x.shape
        H = self.n_heads
        dh = D // H
        qkv = self.qkv(x).view(B, T, H, 3 * dh).transpose(1, 2)
        q, k, v = qkv.split(dh, dim=-1)
        out, weights = scaled_dot_product_attention(q, k, v, causal_mask(T, device=x.device))
        return self.proj(merge_heads(out)), weights
