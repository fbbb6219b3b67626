# part: masks
# why: the fill value lives in an enum.Enum (a float enum) and apply_mask reads it; causal_average by cumulative row counts

import enum


class Fill(float, enum.Enum):
    BLOCKED = float("-inf")


def apply_mask(scores, mask):
    return scores.masked_fill(~mask, Fill.BLOCKED.value)


def causal_average(T):
    allowed = torch.ones(T, T).tril()
    counts = allowed.cumsum(dim=-1)[:, -1:]
    return allowed / counts
