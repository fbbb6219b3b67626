"""Reference implementation of every quantity in the exercise contract.

The graders' ground truth. One module per assignment part; each part module is
self-contained so it can be injected alone into a submission graded on
another part (which names each part defines: autograder.assignment.PARTS).
"""

from .examples import CAT_SAT_DOWN_KEYS, CAT_SAT_DOWN_QUERIES, CAT_SAT_DOWN_TOKENS
from .heads import CausalSelfAttention, merge_heads, split_heads
from .masks import apply_mask, causal_average, causal_mask, combine_masks, padding_mask
from .positions import add_positions, is_permutation_equivariant, position_similarity, sinusoidal_encoding
from .scaling import (
    attention_scores,
    attention_weights,
    dot_product_spread,
    materialized_attention,
    scaled_dot_product_attention,
    softmax_entropy,
)
from .tiles import block_state, merge_states, tiled_attention, tiled_score_bytes
from .timing import fit_power_law, score_grid_bytes, time_attention, time_call

__all__ = [
    "causal_average", "causal_mask", "padding_mask", "apply_mask", "combine_masks",
    "attention_scores", "attention_weights", "scaled_dot_product_attention", "dot_product_spread", "softmax_entropy",
    "split_heads", "merge_heads", "CausalSelfAttention",
    "sinusoidal_encoding", "position_similarity", "add_positions", "is_permutation_equivariant",
    "score_grid_bytes", "time_call", "time_attention", "fit_power_law",
    "block_state", "merge_states", "tiled_attention", "tiled_score_bytes",
    "materialized_attention", "CAT_SAT_DOWN_TOKENS", "CAT_SAT_DOWN_QUERIES", "CAT_SAT_DOWN_KEYS",
]
