# part: positions
# why: Annotated-Transformer PositionalEncoding module (table as a registered buffer of max_len 5000, nn.Dropout(p=0.0)) cached per d_model and used by add_positions; assert turned into ValueError; torch.allclose bound with functools.partial

import functools


def sinusoidal_encoding(T, d_model, base=10000.0):
    try:
        assert d_model % 2 == 0, f"d_model must be even, got {d_model}"
    except AssertionError as exc:
        raise ValueError(*exc.args) from exc
    position = torch.arange(0, T, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * -(math.log(base) / d_model))
    pe = torch.zeros(T, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.float()


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.0, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model).unsqueeze(0))

    def forward(self, x):
        table = self.pe[:, : x.size(1)].to(device=x.device, dtype=x.dtype)
        return self.dropout(x + table.requires_grad_(False))


@functools.lru_cache(maxsize=None)
def _encoder(d_model):
    return PositionalEncoding(d_model)


def add_positions(x):
    return _encoder(x.size(-1))(x)


def is_permutation_equivariant(fn, x, perm, atol=1e-5):
    close = functools.partial(torch.allclose, atol=atol, rtol=0.0)
    return close(fn(x[:, perm]), fn(x)[:, perm])
