# part: heads
# why: split_heads is an instance of a callable class, merge_heads a lambda; the module binds n_heads with functools.partial and attends in a nested function

import functools


class _HeadSplitter:
    """Calling it turns (B, T, D) into (B, H, T, D // H), head h owning features h*dh:(h+1)*dh."""

    def __call__(self, x, n_heads):
        B, T, D = x.shape
        if D % n_heads:
            raise ValueError(f"cannot cut {D} features into {n_heads} equal heads")
        return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)


split_heads = _HeadSplitter()
merge_heads = lambda x: x.transpose(1, 2).flatten(start_dim=2)  # noqa: E731


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.d_model, self.n_heads = d_model, n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        to_heads = functools.partial(split_heads, n_heads=self.n_heads)

        def attend(q, k, v):
            T = q.shape[-2]
            s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
            s = s.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool, device=q.device)), float("-inf"))
            w = s.softmax(-1)
            return w @ v, w

        out, weights = attend(*map(to_heads, self.qkv(x).split(self.d_model, dim=-1)))
        return self.proj(merge_heads(out)), weights
