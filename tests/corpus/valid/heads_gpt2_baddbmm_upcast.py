# part: heads
# why: Hugging Face GPT-2 "upcast and reorder" style: scores by torch.baddbmm on (B*H, T, dh) in float32, a non-persistent bool `bias` buffer sliced [k_len - q_len : k_len, :k_len], torch.where with a finfo.min tensor, softmax then .type(value.dtype)

class CausalSelfAttention(nn.Module):
    max_positions = 1024

    def __init__(self, d_model, n_heads):
        super().__init__()
        self.embed_dim = d_model
        self.num_heads = n_heads
        self.head_dim = d_model // n_heads
        if self.head_dim * n_heads != d_model:
            raise ValueError(f"embed_dim must be divisible by num_heads (got embed_dim={d_model}, num_heads={n_heads})")
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        n = self.max_positions
        self.register_buffer("bias", torch.tril(torch.ones((n, n), dtype=torch.bool)).view(1, 1, n, n), persistent=False)

    def _split_heads(self, tensor):
        shape = tensor.size()[:-1] + (self.num_heads, self.head_dim)
        return tensor.view(shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (self.num_heads * self.head_dim,))

    def _upcast_attn(self, query, key, value):
        bsz, heads, q_len, dk = query.size()
        k_len = key.size(-2)
        scale = 1.0 / float(value.size(-1)) ** 0.5
        buffer = torch.empty(bsz * heads, q_len, k_len, dtype=torch.float32, device=query.device)
        q = query.reshape(-1, q_len, dk).float()
        kt = key.transpose(-1, -2).reshape(-1, dk, k_len).float()
        w = torch.baddbmm(buffer, q, kt, beta=0, alpha=scale).reshape(bsz, heads, q_len, k_len)
        causal = self.bias[:, :, k_len - q_len : k_len, :k_len]
        lowest = torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype, device=w.device)
        w = torch.where(causal, w, lowest)
        w = nn.functional.softmax(w, dim=-1).type(value.dtype)
        return torch.matmul(w, value), w

    def forward(self, hidden_states):
        query, key, value = self.qkv(hidden_states).split(self.embed_dim, dim=2)
        out, weights = self._upcast_attn(self._split_heads(query), self._split_heads(key), self._split_heads(value))
        return self.proj(self._merge_heads(out)), weights
