# Source of truth: assignments/attention/quizcheck.py (release/ and solutions/ hold copies whose block of quiz
# data the release build fills in; edit the source, and the key in autograder/graders/quiz_key.py).
"""Feedback for the quiz in quiz.ipynb.

After answering a question, run its check cell::

    quizcheck.check("q01", answer_q01)

What it prints depends on the quiz's mode, which the release build (``make release``, or
``nbgrader generate_assignment``) wrote into the block of quiz data below:

* ``self-check``: whether the answer is right, with a one-line explanation of the option you
  picked (why it fits, or why it does not), so you can try again;
* ``counted``: that the answer is recorded, and that the quiz is marked after the deadline. A
  counted quiz's copy of this file holds no answer key, digest or explanation: nothing here, or
  anywhere in the notebook, says which option is right.

It never raises: an unanswered question (``None``) prints "not answered yet", and anything other
than one of the strings "a", "b", "c" or "d" (any case, spaces ignored) prints what is accepted.

In a self-check quiz, there is no answer key in this file either. For each question it keeps only
the SHA-256 hex digest of the UTF-8 text "<question id>:<letter>:<SALT>" for the right letter
(letters lower case, SALT as below), generated from the course's hidden answer key. They keep the
letters out of a casual read, not out of reach: with four options a question, trying them all is
what a self-check invites anyway. Grading, when the quiz counts, uses the hidden key alone.

``what_is_left(globals())`` returns the questions that are not answered (or, in a self-check quiz,
not right) yet ("" when none is left); the quiz's grade cell asserts that it is empty, so *Restart
& Run All* and nbgrader's *Validate* button show where the quiz stands. While nbgrader autogrades
it returns "" and checks nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import textwrap
from typing import Any, Mapping

__all__ = ["check", "what_is_left"]

SALT = "4f1428b0b7bed5b0779adf16"

OPTIONS = ("a", "b", "c", "d")

# BEGIN QUIZ DATA
# Written by the release build from the hidden key: a self-check quiz.
MODE = "self-check"
QUESTIONS: tuple[str, ...] = (
    "q01", "q02", "q03", "q04", "q05", "q06", "q07", "q08", "q09", "q10", "q11", "q12", "q13",
    "q14", "q15", "q16", "q17", "q18", "q19", "q20", "q21", "q22",
)
# Question id -> SHA-256 digest of "<id>:<right letter>:<SALT>".
ANSWER_HASHES: dict[str, str] = {
    "q01": "f5c6842dfbd565ea8434502645873c4d3a1a9ea2c98fd10ef680e4aca2893f51",
    "q02": "f303154752caeb11290fd84dc3a24669d44334ddfcfcb278599541a4377e1d41",
    "q03": "cf9a91137c540f23467eae90a5af5a950b44a0e1edb3663c235af54a91b18bad",
    "q04": "8c97e46b93087bfd4c10b9c03b767f4488ebc9e35349f351450a2a788f0f1f42",
    "q05": "aa2d4137dbc264f217d3aef405361b088d3f79eecb6d2002ea89b536aa7a676d",
    "q06": "2aea1e6db23cf7bb929c0f613890b4a6d141808484f23757c2bdbd1bf30d77d6",
    "q07": "903f4a3ace2313518c8745c265403ac96410c1f554729c53cc4864ea15b3529d",
    "q08": "c1614513cdbabb33d6df051fe4185a00d63d2f7a58e804973158f0acea5292a3",
    "q09": "8f2777a25a0544348449a3e3df636d11aa423f1e7f0d38727837f628c6b42b25",
    "q10": "e847fcbca9be40ff0adc7399b3133c8ce838a9bac412ea54cad3dac38ca766ef",
    "q11": "4c6731ccdbd9f909bb86d2b13c44dc8d3b7bab46069bf33d974d69fd3988df50",
    "q12": "86798757f8fe9e7f0470305609eda7c653af3e8ce0ba5367422e32de5c90b154",
    "q13": "55f54a6dc01d2f463630752f0b608ae436be36e7bb0e4775735bed497277bacf",
    "q14": "e72bd92189b1f2c1ca8a108a22909eb54847e2797d5fc5f752fd2dffb8df101b",
    "q15": "8530df3e9f7352e293fea00f6341f677d4b582a66e783adbd6accfbcda749d2f",
    "q16": "33e0f372b5e099d9dbd9d1bc1c2d535d13cc4dcc3d1076cc395d195bd83eb95b",
    "q17": "f1ae8579ecb9e0a7d48483ba547bc67d56a12eee7f2dbcdea10d4811c5e623ec",
    "q18": "4fe4344d8e59f1ed2985966a62af79a68df413a44338c4b1db9554b781ee84da",
    "q19": "bde504eb336bdf286b4f2b76fc667ec63da4155e6f395818bdd78153deba7224",
    "q20": "5f6f33e507f0e197f3f0e401854009802f298ad6e3218cff82676e43207602f6",
    "q21": "42f24110c6eeb98f7d287255e7f5673caf5a889ca0f36db59459bcc80ec60bc4",
    "q22": "0334b8724e1cf1eaf34b842396e08c49ed751bce855863c59147d33eb97805a6",
}
# Question id -> option -> what that option gets right or wrong.
EXPLANATIONS: dict[str, dict[str, str]] = {
    "q01": {
        "a": "Values play no part in scoring: they are what gets mixed once the weights are "
            "known.",
        "b": "That is the score of the pair (j, i): token j asking about token i. Row i of the "
            "grid belongs to i's query, so you would get the transposed grid.",
        "c": "The asker brings a query (what it looks for) and every token offers a key (how it "
            "is matched); their dot product q_i · k_j is the score, so the whole grid is Q Kᵀ.",
        "d": "A value is the content a token hands over, not the label it is matched by: "
            "matching uses keys.",
    },
    "q02": {
        "a": "Each output is a blend of every token's value in proportion to its weight: in "
            "matrix form, weights @ V.",
        "b": "That is a hard dictionary lookup. Attention is a soft one: every token with a "
            "non-zero weight contributes, which is why the result is trainable.",
        "c": "Keys are only used to work out the weights; what a token passes on is its value.",
        "d": "The query says what token i is looking for; the output is built from what the "
            "other tokens offer, their values.",
    },
    "q03": {
        "a": "That is the spread after dividing by √d. The raw dot product adds up 64 products, "
            "and a sum of many random terms spreads more than any one of them.",
        "b": "Each of the 64 products has variance 1, so the sum has variance 64 and standard "
            "deviation √64 = 8 (measured: about 8.0; about 22.6 at d = 512).",
        "c": "64 is the variance of the sum; the standard deviation is its square root.",
        "d": "That is 1/√d. Summing more terms makes the spread grow with d, not shrink.",
    },
    "q04": {
        "a": "A softmax always produces weights that add up to 1, however large the scores are.",
        "b": "Overflow is a separate issue: a softmax that subtracts the row maximum (as "
            "torch.softmax does) never overflows. Scaling is needed even then, because the "
            "weights themselves are nearly one-hot.",
        "c": "A weighted average with weights that add up to 1 can never be longer than the "
            "longest value vector; a one-hot row just copies one value.",
        "d": "A near one-hot softmax is a hard choice with a gradient close to zero; dividing by "
            "√d keeps the scores near unit size, so attention stays soft and trainable.",
    },
    "q05": {
        "a": "Entropy is largest when all 8 weights equal 1/8, and then it is −Σ (1/8) ln(1/8) = "
            "ln 8 ≈ 2.079 nats; 0 means all weight on one key.",
        "b": "3 is log₂ 8, the maximum in bits. Nats use the natural logarithm.",
        "c": "The entropy of n equal weights is ln n, not n.",
        "d": "Entropy is not bounded by the sum of the weights: the scaled row already reaches "
            "about 1.48.",
    },
    "q06": {
        "a": "That normalises over the queries: each column (key) would add up to 1 instead of "
            "each query's row.",
        "b": "That is the heads dimension: it would share attention between heads instead of "
            "between keys.",
        "c": "Each query divides its attention among the keys, so every row (the last dimension) "
            "must add up to 1.",
        "d": "Then each query would get only a small share of one shared budget, and the rows "
            "would not add up to 1.",
    },
    "q07": {
        "a": "This marks the future entries, strictly above the diagonal: the True = blocked "
            "convention of nn.MultiheadAttention's attn_mask, the opposite of this one.",
        "b": "The lower triangle with its diagonal: query i may see every key j ≤ i, itself "
            "included.",
        "c": "This also removes the diagonal, so a token cannot see itself and the first row has "
            "nothing at all to attend to.",
        "d": "This is the transpose: each query would see itself and the future, never the past.",
    },
    "q08": {
        "a": "That is bottom-right alignment, where the last query lines up with the last key "
            "(as when new queries extend a cache). Top-left alignment pins query 0 to key 0.",
        "b": "A causal mask allows every key up to the query's own position, not only the key at "
            "the same position.",
        "c": "These are exactly the keys after position 1, the ones it must not see.",
        "d": "Top-left alignment means query i sees key j exactly when j ≤ i, whatever the shape "
            "of the grid: for i = 1 that is keys 0 and 1.",
    },
    "q09": {
        "a": "Padding is filler: hiding it along the key dimension keeps its values out of every "
            "real token's output, so results do not depend on how much padding the batch needed.",
        "b": "The padding rows are outputs nobody uses; blocking them still lets real tokens mix "
            "in the padding's values.",
        "c": "A zero vector still scores 0, not −∞, so each padding position keeps a positive "
            "weight (e⁰ = 1): it takes weight away from the real tokens and mixes its value in.",
        "d": "The two block different things (the future, and filler), and a decoder batch with "
            "padding needs both: a key is allowed only if both masks allow it.",
    },
    "q10": {
        "a": "This gives every head a copy of the whole vector. Heads share the model width "
            "instead: d_head = d_model / n_heads = 16.",
        "b": "This is the intermediate view. The heads dimension must come before the tokens, by "
            "a transpose(1, 2), so each head's (T, T) grid is computed like a batch.",
        "c": "(B, T, D) is viewed as (B, T, H, D/H) and transposed to (B, H, T, d_head): 4 "
            "heads, each seeing all 10 tokens with 16 numbers per token.",
        "d": "Tokens and features are swapped: q @ kᵀ would then sum over the tokens instead of "
            "the features.",
    },
    "q11": {
        "a": "That counts the two weight matrices (64·192 + 64·64) but forgets the biases, 192 + "
            "64 more.",
        "b": "64·192 + 192 for the combined query, key and value layer, plus 64·64 + 64 for the "
            "output projection.",
        "c": "That would be four full-width modules, one per head. The heads share the model "
            "width, so the count does not depend on the number of heads.",
        "d": "That is the qkv layer alone (64·192 + 192); the output projection adds 64·64 + 64.",
    },
    "q12": {
        "a": "Each head's dot products run over d_head = 64 / 4 = 16 numbers, so their spread is "
            "about √16 = 4.",
        "b": "That is √d_model. A head's dot product adds up only 16 products, so dividing by 8 "
            "flattens its scores too much.",
        "c": "That divides by d instead of √d and shrinks the spread to about 1/4.",
        "d": "The number of heads is not the length of the vectors in the dot product.",
    },
    "q13": {
        "a": "Each output stays attached to its own token, so when the tokens move the outputs "
            "move with them.",
        "b": "Neighbours mean nothing without positions: each token still scores the same set of "
            "keys, and the order of that set does not change any sum.",
        "c": "The weights still depend on the content of queries and keys; only the order is "
            "invisible, not the tokens themselves.",
        "d": "Attention alone is permutation-equivariant: it treats the sequence as a bag of "
            "tokens. Adding position vectors (which stay put while the tokens move) breaks this.",
    },
    "q14": {
        "a": "The sine columns are 0 at position 0, but cos 0 = 1 in every cosine column.",
        "b": "Every angle is 0 at position 0: even columns hold sin 0 = 0 and odd columns cos 0 "
            "= 1.",
        "c": "This has sine and cosine swapped: the even columns are the sines.",
        "d": "This is the concatenated layout (all sines, then all cosines) that some libraries "
            "use; this assignment interleaves them.",
    },
    "q15": {
        "a": "Orthogonal encodings would have a similarity of 0 for every other position; these "
            "stay well above 0.",
        "b": "Then every cosine similarity would be exactly 1.",
        "c": "Fast-turning dimensions tell close positions apart, slow ones barely change, so "
            "neighbours stay similar: a sense of near and far that attention can use.",
        "d": "Position 60 is 50 positions away and its similarity is still 0.49; the drop is "
            "neither linear nor down to 0.",
    },
    "q16": {
        "a": "That grows the grid with T (×128). The grid has T² entries, so it grows 128² = "
            "16,384 times.",
        "b": "That would be 2 bytes per score (float16). In float32 it is twice as much.",
        "c": "64 GB is the grid at 131,072 tokens, 16 times longer still.",
        "d": "8,192² scores × 4 bytes = 268,435,456 bytes = 256 MB, 16,384 times the 16 KB: per "
            "head, per layer, per sequence.",
    },
    "q17": {
        "a": "That is one grid. Every sequence and every head has its own, 8 × 4 = 32 of them.",
        "b": "That counts 2 bytes per score (float16); float32 takes 4.",
        "c": "B · H · T² · itemsize = 8 · 4 · 1,024² · 4 bytes = 134,217,728 bytes = 128 MB.",
        "d": "That uses T instead of T²: each of the 1,024 queries has a row of 1,024 scores.",
    },
    "q18": {
        "a": "Every token is compared with every token, so there are T² pairs: doubling T makes "
            "four times as many.",
        "b": "The grid has T² entries, and computing it (Q Kᵀ) and using it (weights @ V) each "
            "take about T² · d operations, so doubling T quadruples both.",
        "c": "Q Kᵀ multiplies (T × d) by (d × T): about T² · d operations with d fixed, not T³.",
        "d": "The two steps each cost about T² · d and run one after the other; their costs add "
            "up, they do not multiply.",
    },
    "q19": {
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
    "q20": {
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
    "q21": {
        "a": "It computes the same scores, but never all at once: each block is merged into the "
            "running state and then thrown away.",
        "b": "128 × 128 is a tile of 128 queries by 128 keys, as GPU kernels use when they split "
            "the queries too. A block of keys for all 131,072 queries holds 131,072 × 128 "
            "scores.",
        "c": "131,072 × 128 × 4 bytes = 67,108,864 bytes = 64 MB; the grid has 131,072 × 131,072 "
            "entries, T / block_size = 1,024 times more.",
        "d": "The grid shrinks by the number of blocks, T / block_size = 1,024, not by 8.",
    },
    "q22": {
        "a": "m = 0 claims a score of 0 was seen. Merged with a block whose scores are all "
            "negative, the max would come out as 0, which no key has.",
        "b": "The empty state: no key, so no maximum (−∞), nothing summed (0) and no output (0). "
            "In a merge its weight is 0 · e^(−∞) = 0. Guard the subtraction: in an empty row "
            "subtract 0, not m.",
        "c": "NaN spreads: merged with a real state, NaN · 0 is still NaN, and the query's whole "
            "output is lost.",
        "d": "That is a softmax over fake, equal scores. Merged with a real block it is "
            "outweighed (e^(−10⁹ − m) is 0), but as a state it is wrong: ℓ counts keys the query "
            "may not see.",
    },
}
# END QUIZ DATA

_ACCEPTED = '"a", "b", "c" or "d"'


def _digest(question_id: str, letter: str) -> str:
    return hashlib.sha256(f"{question_id}:{letter}:{SALT}".encode("utf-8")).hexdigest()


def _show(value: object) -> str:
    """A short, safe description of whatever the student assigned."""
    try:
        text = repr(value)
    except Exception:
        text = f"a {type(value).__name__} object"
    return text if len(text) <= 40 else text[:37] + "..."


def _letter(answer: object) -> str | None:
    """The option an answer names ("a" to "d"), or None when it names none."""
    letter = str.lower(str.strip(answer)) if isinstance(answer, str) else None
    return letter if letter in OPTIONS else None


def _is_right(question_id: str, letter: str) -> bool:
    return _digest(question_id, letter) == ANSWER_HASHES[question_id]


def _self_check() -> bool:
    return MODE == "self-check"


def _ids() -> str:
    if not QUESTIONS:
        return ("this copy of quizcheck.py has no quiz data (the one in assignments/ is filled in by "
                "the release build: use the release's copy)")
    return f"the ids are {QUESTIONS[0]} to {QUESTIONS[-1]}"


def _feedback(question_id: object, answer: object) -> str:
    if not isinstance(question_id, str) or question_id not in QUESTIONS:
        return f"There is no question {_show(question_id)} in this quiz: {_ids()}."
    variable = f"answer_{question_id}"
    if answer is None:
        return (
            f"{question_id}: not answered yet. Replace None in {variable} with {_ACCEPTED}, "
            "then run the answer cell and this one again."
        )
    letter = _letter(answer)
    if letter is None:
        return (
            f"{question_id}: {_show(answer)} is not one of the options. "
            f"Set {variable} to one of the strings {_ACCEPTED}, with the quotes."
        )
    if not _self_check():
        return (f'{question_id}: answer "{letter}" recorded. The quiz is marked after the deadline: '
                "until then no check says whether an answer is right, and you may change it until you submit.")
    explanation = EXPLANATIONS[question_id][letter]
    if _is_right(question_id, letter):
        return f"✔ {question_id}: right! {explanation}"
    return f"✘ {question_id}: not this one. {explanation} Try another option."


def check(question_id: str, answer: object) -> None:
    """Print feedback on ``answer`` to the question ``question_id`` (e.g. "q01"); never raises."""
    try:
        message = _feedback(question_id, answer)
    except Exception as exc:  # feedback must never stop the quiz
        message = f"Could not check this answer ({type(exc).__name__}); set it to {_ACCEPTED}."
    try:
        print(message)
    except Exception:
        pass


def what_is_left(namespace: Mapping[str, Any]) -> str:
    """The questions not answered (in a self-check quiz: or not right) yet, a few lines; "" when none.

    Reads ``answer_q01`` ... from ``namespace`` (pass ``globals()``) and prints
    one ✔ line when every answer is right (counted: recorded). While nbgrader autogrades (it sets
    NBGRADER_EXECUTION) it checks nothing and returns "": the hidden key grades.
    """
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        return ""
    left: dict[str, list[str]] = {"not answered yet": [], "not one of a-d": [], "not right yet (✘)": []}
    for question_id in QUESTIONS:
        answer = namespace.get(f"answer_{question_id}")
        letter = _letter(answer)
        if answer is None:
            left["not answered yet"].append(question_id)
        elif letter is None:
            left["not one of a-d"].append(question_id)
        elif _self_check() and not _is_right(question_id, letter):
            left["not right yet (✘)"].append(question_id)
    if not any(left.values()):
        if _self_check():
            print(f"✔ quiz: all {len(QUESTIONS)} answers are right")
        else:
            print(f"✔ quiz: all {len(QUESTIONS)} answers recorded; the quiz is marked after the deadline")
        return ""
    lines = ["quiz: not finished"]
    for label, ids in left.items():
        if ids:  # wrapped to 76 columns: nbgrader's validate cuts longer lines
            lines += textwrap.wrap(f"{label}: {', '.join(ids)}", width=76, initial_indent="  ",
                                   subsequent_indent="    ")
    if os.environ.get("NBGRADER_EXECUTION") == "validate":
        _message_alone()
    return "\n".join(lines + ["  (the check under each question says more)"])


def _message_alone() -> None:
    """Under nbgrader's Validate (its own kernel), the failing grade cell shows its message alone, without
    the traceback around the assert (IPython's "Minimal" mode): what is left comes first."""
    with contextlib.suppress(Exception):  # the message is right either way
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            shell.InteractiveTB.set_mode(mode="Minimal")
