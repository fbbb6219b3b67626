# part: masks
# why: full type hints (Optional, PEP 604 unions), an assert turned into a ValueError, a nested helper in causal_mask, apply_mask as a lambda, padding unflattened to (B, 1, 1, T)

from typing import Optional

Tensor = torch.Tensor


def causal_mask(T_q: int, T_k: Optional[int] = None, *, device: torch.device | str | None = None) -> Tensor:
    T_k = T_q if T_k is None else T_k
    try:
        assert T_q >= 0 and T_k >= 0, f"sequence lengths must be non-negative, got T_q={T_q}, T_k={T_k}"
    except AssertionError as err:
        raise ValueError(str(err)) from None

    def steps(n: int) -> Tensor:
        return torch.arange(n, device=device)

    return steps(T_q)[:, None] >= steps(T_k)[None, :]


def padding_mask(lengths: Tensor, T: int) -> Tensor:
    return lengths[:, None] > torch.arange(T, device=lengths.device)


apply_mask = lambda scores, mask: scores.masked_fill(mask.logical_not(), float("-inf"))  # noqa: E731


def combine_masks(causal: Tensor, padding: Tensor) -> Tensor:
    return causal & padding.unflatten(-1, (1, 1, -1))
