# part: positions
# hint: positions.interleaves
# why: tensor2tensor get_timing_signal_1d in numpy: inv_timescales from log_timescale_increment, scaled_time = position * inv_timescales, signal = np.concatenate([sin, cos], axis=1)

import numpy as np


def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2:
        raise ValueError(f"channels must be even, got {d_model}")
    num_timescales = d_model // 2
    log_timescale_increment = math.log(base) / num_timescales
    inv_timescales = np.exp(np.arange(num_timescales, dtype=np.float64) * -log_timescale_increment)
    position = np.arange(T, dtype=np.float64)
    scaled_time = position[:, None] * inv_timescales[None, :]
    signal = np.concatenate([np.sin(scaled_time), np.cos(scaled_time)], axis=1)
    return torch.from_numpy(signal).float()
