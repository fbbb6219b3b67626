# part: masks
# hint: masks.on_device
# needs: cuda
# why: Annotated-Transformer subsequent_mask in numpy, torch.from_numpy(np.triu(ones, k=1)) == 0: always a CPU tensor, device= is ignored

import numpy as np


def causal_mask(T_q, T_k=None, *, device=None):
    if T_k is None:
        T_k = T_q
    subsequent = np.triu(np.ones((T_q, T_k)), k=1).astype("uint8")
    return torch.from_numpy(subsequent) == 0
