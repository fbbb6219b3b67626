# part: masks
# why: Annotated-Transformer style masks built in numpy: causal_mask = torch.as_tensor(np.triu(ones, k=1) == 0, device=device); causal_average from np.tril divided by its row sums

import numpy as np


def causal_average(T):
    if T < 0:
        raise ValueError(f"T must be non-negative, got {T}")
    lower = np.tril(np.ones((T, T), dtype=np.float32))
    return torch.from_numpy(lower / lower.sum(axis=1, keepdims=True))


def causal_mask(T_q, T_k=None, *, device=None):
    T_k = T_q if T_k is None else T_k
    if min(T_q, T_k) < 0:
        raise ValueError(f"sequence lengths must be non-negative, got {T_q} and {T_k}")
    future = np.triu(np.ones((T_q, T_k), dtype=np.uint8), k=1)
    return torch.as_tensor(future == 0, device=device)
