# part: heads
# why: nanoGPT-style @dataclass GPTConfig, built inside CausalSelfAttention.__init__(d_model, n_heads) from its arguments; q/k/v by slicing the fused output; the config sits below the module so a failing decorator cannot leave base.py's module in place

from dataclasses import dataclass


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        config = GPTConfig(n_embd=d_model, n_head=n_heads)
        if config.n_embd % config.n_head != 0:
            raise ValueError(f"n_embd={config.n_embd} is not divisible by n_head={config.n_head}")
        self.config = config
        self.qkv = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)

    def forward(self, x):
        B, T, C = x.shape
        nh = self.config.n_head
        fused = self.qkv(x)
        q, k, v = fused[:, :, :C], fused[:, :, C:2 * C], fused[:, :, 2 * C:]
        q, k, v = (t.reshape(B, T, nh, C // nh).transpose(1, 2) for t in (q, k, v))
        att = q @ k.transpose(-2, -1) / math.sqrt(C // nh)
        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(diagonal=1)
        att = att.masked_fill(future, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        return self.proj(y), att


@dataclass
class GPTConfig:
    block_size: int = 1024
    n_embd: int = 768
    n_head: int = 12
    dropout: float = 0.0
    bias: bool = True
