"""The likely mistakes' hints, each written once: the catalogue of docs/mistakes.md.

A failed check names its likely mistake in these words (`hint(key)`, as plain text), so that one slip reads
the same wherever it is named and the class report counts it once. Everything else takes them from here:

* the graders (autograder/graders/test_<part>.py) call `hint("<part>.<name>")`;
* a buggy variant of the validation corpus names the hint it must get by key (`# hint: masks.fill_zero`);
* docs/mistakes.md shows each hint in its table, the key in a comment after it: `make release` writes the
  text there, and into the HINTS block of the students' selfcheck.py (the self-checks give the same hints);
  the fast tests check both copies.

A hint is Markdown: backticks mark code on the page, and are dropped where it is plain text (`hint`).
This module imports nothing and holds nothing secret: the mistakes are public.
"""

from __future__ import annotations

HINTS: dict[str, str] = {
    # masks
    "masks.itself": "a token may attend to itself",
    "masks.off_by_one": "off by one: query i sees key i+1",
    "masks.convention": "this contract uses True = may attend",
    "masks.transposed": "rows are queries, columns are keys",
    "masks.fill_where_false": "fill where the mask is False",
    "masks.fill_zero": "0 is a score, not a block: use -inf",
    "masks.renormalise": "renormalise, or mask before softmax",
    "masks.arithmetic": "build a fill, not arithmetic on booleans",
    "masks.on_queries": "padding hides keys (the last dimension)",
    "masks.top_left": "top-left alignment, as `is_causal`",
    "masks.pure": "don't modify inputs",
    "masks.on_device": "create masks on the input's device",
    "masks.average": "each row is an average: weights 1/(i+1)",
    "masks.and_not_or": "a query may attend a key only if both masks allow it (and, not or)",
    "masks.padding_off_by_one": "off by one: positions 0..length-1 are the real tokens",
    # scaling
    "scaling.dim": "softmax over the keys: `dim=-1`",
    "scaling.sqrt_d_not_d": "divide by √d, not d",
    "scaling.no_scale": "divide by √d",
    "scaling.divide_not_multiply": "divide, don't multiply",
    "scaling.last_dimension": "d is the last dimension",
    "scaling.head_dimension": "scale by the head dimension",
    "scaling.k_transpose": "`k.transpose(-2, -1)`",
    "scaling.max": "subtract the row max",
    "scaling.xlogy": "0·log 0 = 0 (`torch.special.xlogy`)",
    "scaling.spread": "std over the n dot products",
    # heads
    "heads.split_no_transpose": "view as (B, T, H, dh), then transpose(1, 2)",
    "heads.merge_no_transpose": "transpose back before reshaping",
    "heads.contiguous": "use `reshape` or `.contiguous()`",
    "heads.strided_heads": "heads own contiguous feature blocks",
    "heads.qkv_order": "`[q | k | v]`, each d_model wide",
    "heads.layout": "follow the module layout",
    "heads.per_head": "return one weight grid per head",
    "heads.dropout": "no dropout: the module holds only `qkv` and `proj` (and is in training mode until `.eval()`)",
    # positions
    "positions.sin_even": "even columns are sin",
    "positions.interleaves": "this contract interleaves",
    "positions.pairs": "frequencies go by pairs",
    "positions.exponent": "base^(2i/d)",
    "positions.from_zero": "positions start at 0",
    "positions.angles_in_float": "compute angles in float (64 is safest)",
    "positions.cosine": "cosine = dot of unit vectors",
    # timing
    "timing.synchronise": "synchronise before reading the clock",
    "timing.warmup": "run untimed warm-up calls",
    "timing.median": "take the median of several runs",
    "timing.grid_bytes": "B · H · T² · itemsize",
    "timing.log_log": "fit log(time) against log(T)",
    "timing.materialised_grid": "the study is about the materialised grid",
    "timing.clock": "time each call of fn(*args) with time.perf_counter()",
    "timing.units": "return wall-clock seconds: time.perf_counter() after minus before",
    "timing.total": "take the median of the timed calls",
    "timing.count": "call fn exactly warmup + repeats times",
    "timing.fresh": "q, k, v of shape (1, T, d_head), fresh for each T",
    # tiles
    "tiles.rescale": "multiply the old sum and output by exp(m_old - m_new)",
    "tiles.running_max": "the running max is the max of both",
    "tiles.empty": "an empty state is m = -inf, l = 0, o = 0; guard it",
    "tiles.normalised": "keep `o` normalised per SPEC, weight by l·exp(m - m_new)",
    "tiles.skip": "a block is skipped only when its first key is after every query",
    "tiles.key_count": "the keys are k's: T_k = `k.shape[-2]`, not the number of queries",
    "tiles.log_sum": "`l` is the sum of exp(score - m), not its log",
    "tiles.last_block": "the last block may be shorter",
    "tiles.whole_grid": "hold one block of scores at a time",
}


def hint(key: str) -> str:
    """The hint `key` ("<part>.<name>") as plain text: what a failed check and the self-checks say."""
    return plain(HINTS[key])


def plain(markdown: str) -> str:
    """A hint's Markdown as plain text (its backticks dropped)."""
    return markdown.replace("`", "")


def key_of(text: str) -> str | None:
    """The key of the hint whose plain text is `text` (None: no hint of the catalogue says that)."""
    return next((key for key, markdown in HINTS.items() if plain(markdown) == text), None)
