"""The hidden answer key of the self-check quiz (assignments/attention/quiz.ipynb).

The single source of truth for the right letters: the quiz grader reads it, and
the salted digests in assignments/attention/quizcheck.py are generated from it
(a test checks that they match). Never shipped to students.
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
}
