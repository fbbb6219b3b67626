# part: heads
# hint: masks.on_device
# needs: cuda
# why: forward builds tril = torch.tril(torch.ones(T, T)) with no device (video style) and masks with it, which fails for CUDA inputs

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
        hs = C // self.n_head
        q, k, v = self.qkv(x).split(C, dim=-1)
        q, k, v = (t.view(B, T, self.n_head, hs).transpose(1, 2) for t in (q, k, v))
        tril = torch.tril(torch.ones(T, T))
        wei = (q @ k.transpose(-2, -1)) * hs ** -0.5
        wei = wei.masked_fill(tril == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        out = (wei @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(out), wei
