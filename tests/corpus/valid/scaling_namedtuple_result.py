# part: scaling
# why: scaled_dot_product_attention returns a typing.NamedTuple (output, weights), a tuple subclass as torch.max or torch.linalg.slogdet return

from typing import NamedTuple


class AttentionResult(NamedTuple):
    output: torch.Tensor
    weights: torch.Tensor


def scaled_dot_product_attention(q, k, v, mask=None):
    weights = attention_weights(attention_scores(q, k), mask)
    return AttentionResult(output=weights @ v, weights=weights)
