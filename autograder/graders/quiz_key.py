"""The hidden answer key of the quiz (assignments/attention/quiz.ipynb): the right options and what
every option gets right or wrong. Never shipped in a counted quiz; the grading side only.

The single source of truth for the right letters and the explanations. Letters are those of the
source notebook (its order of the options, "canonical"); a course that shuffles the options shows
them in the order `autograder.quiz.option_order(secret, id)` gives, and the release build and the
quiz grader both translate. The question and option texts are written once, in the notebook.

* The quiz grader (test_quiz.py) scores the answers against ANSWERS and explains them with
  EXPLANATIONS.
* The release build (autograder/nbgrader/quizrelease.py) writes, for a self-check quiz only, the
  salted digests of the right letters and these explanations into the released quizcheck.py; a
  counted quiz's release gets neither.
"""

ANSWERS: dict[str, str] = {
    "q01": "c",  # queries/keys/values: what a score compares
    "q02": "a",  # queries/keys/values: what the output is
    "q03": "b",  # √d: spread of raw dot products (≈ √d)
    "q04": "d",  # √d: why a saturated softmax is a problem
    "q05": "a",  # √d: entropy of the weights (ln 8 maximum)
    "q06": "c",  # softmax over the keys (dim=-1)
    "q07": "b",  # causal mask, True = may attend (tril)
    "q08": "d",  # causal mask, top-left aligned when T_q ≠ T_k
    "q09": "a",  # padding mask hides keys
    "q10": "c",  # heads: split shapes (d_head = d_model / n_heads)
    "q11": "b",  # heads: parameter count (16,640)
    "q12": "a",  # heads: scale by √d_head
    "q13": "d",  # positions: permutation equivariance
    "q14": "b",  # positions: interleaved sinusoids at position 0
    "q15": "c",  # positions: similarity of sinusoidal encodings
    "q16": "d",  # cost: 64 tokens 16 KB → 8,192 tokens 256 MB
    "q17": "c",  # cost: B·H·T²·itemsize
    "q18": "b",  # cost: doubling T quadruples (T² time)
    "q19": "d",  # tiles: rescale the running sum when the max changes
    "q20": "a",  # tiles: causal blocks after the last query are skipped
    "q21": "c",  # tiles: memory of one block against the grid
    "q22": "b",  # tiles: the state of a fully masked block
}

# Question id -> option -> what that option gets right or wrong.
EXPLANATIONS: dict[str, dict[str, str]] = {
    "q01": {  # queries/keys/values: what a score compares
        "a": "Values play no part in scoring: they are what gets mixed once the weights are known.",
        "b": "That is the score of the pair (j, i): token j asking about token i. Row i of the "
            "grid belongs to i's query, so you would get the transposed grid.",
        "c": "The asker brings a query (what it looks for) and every token offers a key (how it is "
            "matched); their dot product q_i · k_j is the score, so the whole grid is Q Kᵀ.",
        "d": "A value is the content a token hands over, not the label it is matched by: matching "
            "uses keys.",
    },
    "q02": {  # queries/keys/values: what the output is
        "a": "Each output is a blend of every token's value in proportion to its weight: in matrix "
            "form, weights @ V.",
        "b": "That is a hard dictionary lookup. Attention is a soft one: every token with a "
            "non-zero weight contributes, which is why the result is trainable.",
        "c": "Keys are only used to work out the weights; what a token passes on is its value.",
        "d": "The query says what token i is looking for; the output is built from what the other "
            "tokens offer, their values.",
    },
    "q03": {  # √d: spread of raw dot products (≈ √d)
        "a": "That is the spread after dividing by √d. The raw dot product adds up 64 products, "
            "and a sum of many random terms spreads more than any one of them.",
        "b": "Each of the 64 products has variance 1, so the sum has variance 64 and standard "
            "deviation √64 = 8 (measured: about 8.0; about 22.6 at d = 512).",
        "c": "64 is the variance of the sum; the standard deviation is its square root.",
        "d": "That is 1/√d. Summing more terms makes the spread grow with d, not shrink.",
    },
    "q04": {  # √d: why a saturated softmax is a problem
        "a": "A softmax always produces weights that add up to 1, however large the scores are.",
        "b": "Overflow is a separate issue: a softmax that subtracts the row maximum (as "
            "torch.softmax does) never overflows. Scaling is needed even then, because the "
            "weights themselves are nearly one-hot.",
        "c": "A weighted average with weights that add up to 1 can never be longer than the "
            "longest value vector; a one-hot row just copies one value.",
        "d": "A near one-hot softmax is a hard choice with a gradient close to zero; dividing by "
            "√d keeps the scores near unit size, so attention stays soft and trainable.",
    },
    "q05": {  # √d: entropy of the weights (ln 8 maximum)
        "a": "Entropy is largest when all 8 weights equal 1/8, and then it is −Σ (1/8) ln(1/8) = "
            "ln 8 ≈ 2.079 nats; 0 means all weight on one key.",
        "b": "3 is log₂ 8, the maximum in bits. Nats use the natural logarithm.",
        "c": "The entropy of n equal weights is ln n, not n.",
        "d": "Entropy is not bounded by the sum of the weights: the scaled row already reaches "
            "about 1.48.",
    },
    "q06": {  # softmax over the keys (dim=-1)
        "a": "That normalises over the queries: each column (key) would add up to 1 instead of "
            "each query's row.",
        "b": "That is the heads dimension: it would share attention between heads instead of "
            "between keys.",
        "c": "Each query divides its attention among the keys, so every row (the last dimension) "
            "must add up to 1.",
        "d": "Then each query would get only a small share of one shared budget, and the rows "
            "would not add up to 1.",
    },
    "q07": {  # causal mask, True = may attend (tril)
        "a": "This marks the future entries, strictly above the diagonal: the True = blocked "
            "convention of nn.MultiheadAttention's attn_mask, the opposite of this one.",
        "b": "The lower triangle with its diagonal: query i may see every key j ≤ i, itself "
            "included.",
        "c": "This also removes the diagonal, so a token cannot see itself and the first row has "
            "nothing at all to attend to.",
        "d": "This is the transpose: each query would see itself and the future, never the past.",
    },
    "q08": {  # causal mask, top-left aligned when T_q ≠ T_k
        "a": "That is bottom-right alignment, where the last query lines up with the last key (as "
            "when new queries extend a cache). Top-left alignment pins query 0 to key 0.",
        "b": "A causal mask allows every key up to the query's own position, not only the key at "
            "the same position.",
        "c": "These are exactly the keys after position 1, the ones it must not see.",
        "d": "Top-left alignment means query i sees key j exactly when j ≤ i, whatever the shape "
            "of the grid: for i = 1 that is keys 0 and 1.",
    },
    "q09": {  # padding mask hides keys
        "a": "Padding is filler: hiding it along the key dimension keeps its values out of every "
            "real token's output, so results do not depend on how much padding the batch needed.",
        "b": "The padding rows are outputs nobody uses; blocking them still lets real tokens mix "
            "in the padding's values.",
        "c": "A zero vector still scores 0, not −∞, so each padding position keeps a positive "
            "weight (e⁰ = 1): it takes weight away from the real tokens and mixes its value in.",
        "d": "The two block different things (the future, and filler), and a decoder batch with "
            "padding needs both: a key is allowed only if both masks allow it.",
    },
    "q10": {  # heads: split shapes (d_head = d_model / n_heads)
        "a": "This gives every head a copy of the whole vector. Heads share the model width "
            "instead: d_head = d_model / n_heads = 16.",
        "b": "This is the intermediate view. The heads dimension must come before the tokens, by a "
            "transpose(1, 2), so each head's (T, T) grid is computed like a batch.",
        "c": "(B, T, D) is viewed as (B, T, H, D/H) and transposed to (B, H, T, d_head): 4 heads, "
            "each seeing all 10 tokens with 16 numbers per token.",
        "d": "Tokens and features are swapped: q @ kᵀ would then sum over the tokens instead of "
            "the features.",
    },
    "q11": {  # heads: parameter count (16,640)
        "a": "That counts the two weight matrices (64·192 + 64·64) but forgets the biases, 192 + "
            "64 more.",
        "b": "64·192 + 192 for the combined query, key and value layer, plus 64·64 + 64 for the "
            "output projection.",
        "c": "That would be four full-width modules, one per head. The heads share the model "
            "width, so the count does not depend on the number of heads.",
        "d": "That is the qkv layer alone (64·192 + 192); the output projection adds 64·64 + 64.",
    },
    "q12": {  # heads: scale by √d_head
        "a": "Each head's dot products run over d_head = 64 / 4 = 16 numbers, so their spread is "
            "about √16 = 4.",
        "b": "That is √d_model. A head's dot product adds up only 16 products, so dividing by 8 "
            "flattens its scores too much.",
        "c": "That divides by d instead of √d and shrinks the spread to about 1/4.",
        "d": "The number of heads is not the length of the vectors in the dot product.",
    },
    "q13": {  # positions: permutation equivariance
        "a": "Each output stays attached to its own token, so when the tokens move the outputs "
            "move with them.",
        "b": "Neighbours mean nothing without positions: each token still scores the same set of "
            "keys, and the order of that set does not change any sum.",
        "c": "The weights still depend on the content of queries and keys; only the order is "
            "invisible, not the tokens themselves.",
        "d": "Attention alone is permutation-equivariant: it treats the sequence as a bag of "
            "tokens. Adding position vectors (which stay put while the tokens move) breaks this.",
    },
    "q14": {  # positions: interleaved sinusoids at position 0
        "a": "The sine columns are 0 at position 0, but cos 0 = 1 in every cosine column.",
        "b": "Every angle is 0 at position 0: even columns hold sin 0 = 0 and odd columns cos 0 = "
            "1.",
        "c": "This has sine and cosine swapped: the even columns are the sines.",
        "d": "This is the concatenated layout (all sines, then all cosines) that some libraries "
            "use; this assignment interleaves them.",
    },
    "q15": {  # positions: similarity of sinusoidal encodings
        "a": "Orthogonal encodings would have a similarity of 0 for every other position; these "
            "stay well above 0.",
        "b": "Then every cosine similarity would be exactly 1.",
        "c": "Fast-turning dimensions tell close positions apart, slow ones barely change, so "
            "neighbours stay similar: a sense of near and far that attention can use.",
        "d": "Position 60 is 50 positions away and its similarity is still 0.49; the drop is "
            "neither linear nor down to 0.",
    },
    "q16": {  # cost: 64 tokens 16 KB → 8,192 tokens 256 MB
        "a": "That grows the grid with T (×128). The grid has T² entries, so it grows 128² = "
            "16,384 times.",
        "b": "That would be 2 bytes per score (float16). In float32 it is twice as much.",
        "c": "64 GB is the grid at 131,072 tokens, 16 times longer still.",
        "d": "8,192² scores × 4 bytes = 268,435,456 bytes = 256 MB, 16,384 times the 16 KB: per "
            "head, per layer, per sequence.",
    },
    "q17": {  # cost: B·H·T²·itemsize
        "a": "That is one grid. Every sequence and every head has its own, 8 × 4 = 32 of them.",
        "b": "That counts 2 bytes per score (float16); float32 takes 4.",
        "c": "B · H · T² · itemsize = 8 · 4 · 1,024² · 4 bytes = 134,217,728 bytes = 128 MB.",
        "d": "That uses T instead of T²: each of the 1,024 queries has a row of 1,024 scores.",
    },
    "q18": {  # cost: doubling T quadruples (T² time)
        "a": "Every token is compared with every token, so there are T² pairs: doubling T makes "
            "four times as many.",
        "b": "The grid has T² entries, and computing it (Q Kᵀ) and using it (weights @ V) each "
            "take about T² · d operations, so doubling T quadruples both.",
        "c": "Q Kᵀ multiplies (T × d) by (d × T): about T² · d operations with d fixed, not T³.",
        "d": "The two steps each cost about T² · d and run one after the other; their costs add "
            "up, they do not multiply.",
    },
    "q19": {  # tiles: rescale the running sum when the max changes
        "a": "That adds two sums measured from different maxima (5 and 7): the old keys would "
            "count e² ≈ 7.4 times too much. Each sum must first be measured from the common max.",
        "b": "Backwards: exp(s − 7) = exp(s − 5) · e^(5 − 7), so the factor is e^(−2), below 1. "
            "Multiplying by e² makes the old keys count 55 times too much.",
        "c": "Every key keeps its weight in the softmax, however small: the old keys are scaled "
            "down, not dropped.",
        "d": "exp(s − 7) = exp(s − 5) · e^(5 − 7): the old sum measured from the new max is 2 · "
            "e^(−2) ≈ 0.27. Forgetting this rescaling is the classic mistake; it shows only once "
            "a later block scores higher.",
    },
    "q20": {  # tiles: causal blocks after the last query are skipped
        "a": "The last query is 511. A block whose first key comes after it (start > 511) holds "
            "nothing any query may see, so only the blocks starting at 0, 128, 256 and 384 are "
            "computed: a quarter of the work.",
        "b": "Computing a block and then masking all of it costs the full price for nothing. A "
            "block whose first key comes after every query can be skipped.",
        "c": "Half is what tiling queries and keys saves when T_q = T_k (the tiles above the "
            "diagonal). Here the keys after key 511 are seen by no query at all: 12 of the 16 "
            "blocks are skipped.",
        "d": "The block starting at key 512 is one too many: its first key comes after the last "
            "query, 511, so every entry of it is masked.",
    },
    "q21": {  # tiles: memory of one block against the grid
        "a": "It computes the same scores, but never all at once: each block is merged into the "
            "running state and then thrown away.",
        "b": "128 × 128 is a tile of 128 queries by 128 keys, as GPU kernels use when they split "
            "the queries too. A block of keys for all 131,072 queries holds 131,072 × 128 scores.",
        "c": "131,072 × 128 × 4 bytes = 67,108,864 bytes = 64 MB; the grid has 131,072 × 131,072 "
            "entries, T / block_size = 1,024 times more.",
        "d": "The grid shrinks by the number of blocks, T / block_size = 1,024, not by 8.",
    },
    "q22": {  # tiles: the state of a fully masked block
        "a": "m = 0 claims a score of 0 was seen. Merged with a block whose scores are all "
            "negative, the max would come out as 0, which no key has.",
        "b": "The empty state: no key, so no maximum (−∞), nothing summed (0) and no output (0). "
            "In a merge its weight is 0 · e^(−∞) = 0. Guard the subtraction: in an empty row "
            "subtract 0, not m.",
        "c": "NaN spreads: merged with a real state, NaN · 0 is still NaN, and the query's whole "
            "output is lost.",
        "d": "That is a softmax over fake, equal scores. Merged with a real block it is outweighed"
            " (e^(−10⁹ − m) is 0), but as a state it is wrong: ℓ counts keys the query may not "
            "see.",
    },
}
