# part: positions
# why: the sinusoid table built in numpy (float64, interleaved with [:, 0::2] / [:, 1::2]) and returned as torch.from_numpy(...).to(torch.float32)

import numpy as np


def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2:
        raise ValueError(f"d_model must be even to pair sines with cosines, got {d_model}")
    position = np.arange(T, dtype=np.float64)[:, np.newaxis]
    inv_freq = 1.0 / np.power(base, np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    table = np.zeros((T, d_model))
    table[:, 0::2] = np.sin(position * inv_freq)
    table[:, 1::2] = np.cos(position * inv_freq)
    return torch.from_numpy(table).to(torch.float32)
