# why: combine_masks raises an error whose message (and a returned string) holds lone surrogates, which cannot be written as UTF-8
# earns: zero-on combine_masks, causal_average


def combine_masks(causal, padding):
    raise ValueError("bad mask \ud800\udfff" + chr(0xDC80) + "\x00\x1b[2J")


def causal_average(T):
    return "\ud800" * 10
