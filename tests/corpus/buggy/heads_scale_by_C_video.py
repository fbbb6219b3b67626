# part: heads
# hint: scaling.head_dimension
# why: "build GPT" video style: B, T, C = x.shape and wei = q @ k.transpose(-2, -1) * C ** -0.5, so the scores are scaled by the model width, not the head size

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"n_embd={d_model} not divisible by n_head={n_heads}")
        self.n_head = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        wei = q @ k.transpose(-2, -1) * C ** -0.5
        tril = torch.tril(torch.ones(T, T, device=x.device))
        wei = wei.masked_fill(tril == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        out = (wei @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(out), wei
