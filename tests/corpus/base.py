# A correct, plain student submission for the `attention` assignment.
# Every name of docs/contract.md parts masks, scaling, heads, positions, timing and tiles.
import math
import statistics
import time

import torch
import torch.nn.functional as F
from torch import nn


# ---------------------------------------------------------------- masks

def causal_average(T):
    """Row i holds 1/(i+1) in columns 0..i and 0 elsewhere."""
    if T < 0:
        raise ValueError(f"T must be non-negative, got {T}")
    ones = torch.tril(torch.ones(T, T))
    return ones / ones.sum(dim=-1, keepdim=True)


def causal_mask(T_q, T_k=None, *, device=None):
    """True where query i may see key j, i.e. j <= i (top-left aligned)."""
    if T_k is None:
        T_k = T_q
    if T_q < 0 or T_k < 0:
        raise ValueError(f"sequence lengths must be non-negative, got {T_q} and {T_k}")
    return torch.tril(torch.ones(T_q, T_k, dtype=torch.bool, device=device))


def padding_mask(lengths, T):
    """True at positions < lengths[b], on the device of lengths."""
    positions = torch.arange(T, device=lengths.device)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)


def apply_mask(scores, mask):
    """Disallowed scores become -inf (softmax weight 0); a new tensor."""
    return scores.masked_fill(~mask, float("-inf"))


def combine_masks(causal, padding):
    """(T, T) causal and (B, T) key padding -> (B, 1, T, T)."""
    return causal.unsqueeze(0).unsqueeze(0) & padding.unsqueeze(1).unsqueeze(2)


# ---------------------------------------------------------------- scaling

def attention_scores(q, k):
    d = q.shape[-1]
    return q @ k.transpose(-2, -1) / math.sqrt(d)


def attention_weights(scores, mask=None):
    if mask is not None:
        scores = apply_mask(scores, mask)
    return torch.softmax(scores, dim=-1)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = attention_scores(q, k)
    weights = attention_weights(scores, mask)
    return weights @ v, weights


def dot_product_spread(d, n=10_000, *, scaled, generator=None):
    a = torch.randn(n, d, generator=generator)
    b = torch.randn(n, d, generator=generator)
    dots = (a * b).sum(dim=-1)
    spread = dots.std().item()
    if scaled:
        spread = spread / math.sqrt(d)
    return spread


def softmax_entropy(weights):
    return -torch.special.xlogy(weights, weights).sum(dim=-1)


# ---------------------------------------------------------------- heads

def split_heads(x, n_heads):
    B, T, D = x.shape
    if D % n_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by n_heads={n_heads}")
    return x.reshape(B, T, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x):
    B, H, T, dh = x.shape
    return x.transpose(1, 2).reshape(B, T, H * dh)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads):
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.qkv(x).split(self.d_model, dim=-1)
        q = split_heads(q, self.n_heads)
        k = split_heads(k, self.n_heads)
        v = split_heads(v, self.n_heads)
        mask = causal_mask(T, device=x.device)
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.proj(merge_heads(out)), weights


# ---------------------------------------------------------------- positions

def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even for sinusoids, got {d_model}")
    positions = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = positions / base ** (two_i / d_model)
    pe = torch.zeros(T, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.float()


def position_similarity(pe):
    unit = pe / pe.norm(dim=-1, keepdim=True)
    return unit @ unit.T


def add_positions(x):
    B, T, D = x.shape
    pe = sinusoidal_encoding(T, D).to(device=x.device, dtype=x.dtype)
    return x + pe


def is_permutation_equivariant(fn, x, perm, atol=1e-5):
    out_of_permuted = fn(x[:, perm])
    out = fn(x)
    if isinstance(out, tuple):
        out, out_of_permuted = out[0], out_of_permuted[0]
    return torch.allclose(out_of_permuted, out[:, perm], atol=atol)


# ---------------------------------------------------------------- timing

def score_grid_bytes(T, *, n_heads=1, batch=1, dtype=torch.float32):
    itemsize = torch.empty((), dtype=dtype).element_size()
    return batch * n_heads * T * T * itemsize


def _sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def time_call(fn, *args, repeats=5, warmup=1):
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    for _ in range(warmup):
        fn(*args)
    times = []
    for _ in range(repeats):
        _sync()
        start = time.perf_counter()
        fn(*args)
        _sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def time_attention(attn, Ts, *, d_head=64, device="cpu", repeats=5):
    times = []
    for T in Ts:
        q = torch.randn(1, T, d_head, device=device)
        k = torch.randn(1, T, d_head, device=device)
        v = torch.randn(1, T, d_head, device=device)
        times.append(time_call(attn, q, k, v, repeats=repeats))
    return times


def fit_power_law(Ts, times):
    if len(Ts) != len(times) or len(Ts) < 2:
        raise ValueError("need at least two (T, time) pairs of equal length")
    xs = [math.log(t) for t in Ts]
    ys = [math.log(s) for s in times]
    mx = sum(xs) / len(xs)
    my = sum(ys) / len(ys)
    num = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    den = sum((x - mx) ** 2 for x in xs)
    return num / den


# ---------------------------------------------------------------- tiles

def block_state(q, k, v, mask=None):
    """(row max, sum of exp(score - max), normalised output) over one block of keys."""
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    m = scores.max(dim=-1).values
    p = torch.exp(scores - torch.nan_to_num(m, neginf=0.0).unsqueeze(-1))
    l = p.sum(dim=-1)
    # a row that sees a key has l >= 1 (its max gives exp(0)); an empty row has l = 0 and p @ v = 0
    return m, l, (p @ v) / l.clamp(min=1.0).unsqueeze(-1)


def merge_states(a, b):
    m_a, l_a, o_a = a
    m_b, l_b, o_b = b
    m = torch.maximum(m_a, m_b)
    m_safe = torch.nan_to_num(m, neginf=0.0)
    weight_a = l_a * torch.exp(m_a - m_safe)
    weight_b = l_b * torch.exp(m_b - m_safe)
    l = weight_a + weight_b
    o = (weight_a.unsqueeze(-1) * o_a + weight_b.unsqueeze(-1) * o_b) / l.clamp(min=1.0).unsqueeze(-1)
    return m, l, o


def tiled_attention(q, k, v, block_size=128, *, causal=False):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    T_q, T_k = q.shape[-2], k.shape[-2]
    state = None
    for start in range(0, T_k, block_size):
        if causal and start >= T_q:
            break  # this block, and every later one, comes after the last query
        end = min(start + block_size, T_k)
        mask = None
        if causal:
            rows = torch.arange(T_q, device=q.device).unsqueeze(-1)
            mask = torch.arange(start, end, device=q.device) <= rows
        piece = block_state(q, k[..., start:end, :], v[..., start:end, :], mask)
        state = piece if state is None else merge_states(state, piece)
    return state[2]


def tiled_score_bytes(T_q, block_size, *, n_heads=1, batch=1, dtype=torch.float32):
    if block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size}")
    return batch * n_heads * T_q * block_size * torch.empty((), dtype=dtype).element_size()
