# part: heads
# why: the fused output unflattened to (B, T, 3, H, dh), permuted and unbound into q, k, v; output from F.scaled_dot_product_attention(is_causal=True); weights beside it from einsum scores and a triu(1) block

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model ({d_model}) % n_heads ({n_heads}) != 0")
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, D = x.shape
        H = self.n_heads
        q, k, v = self.qkv(x).unflatten(-1, (3, H, D // H)).permute(2, 0, 3, 1, 4).unbind(0)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        scores = torch.einsum("bhid,bhjd->bhij", q, k) * q.shape[-1] ** -0.5
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        return self.proj(out.transpose(1, 2).flatten(2)), weights
