# part: heads
# why: module slices the qkv output by explicit index ranges and writes scores/softmax inline with the head-dimension scale

class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError("d_model must be divisible by n_heads")
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, D = x.shape
        qkv = self.qkv(x)
        q = split_heads(qkv[..., :D], self.n_heads)
        k = split_heads(qkv[..., D:2 * D], self.n_heads)
        v = split_heads(qkv[..., 2 * D:], self.n_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        allowed = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        return self.proj(merge_heads(weights @ v)), weights
