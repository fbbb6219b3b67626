# part: positions
# hint: positions.interleaves
# why: Whisper's sinusoids(): [sin | cos] halves with frequencies exp(-ln(base) · i / (half - 1)), two departures from the contract; the layout is the one PE[0] shows

import numpy as np


def sinusoidal_encoding(T, d_model, base=10000.0):
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even for sinusoids, got {d_model}")
    log_timescale_increment = np.log(base) / (d_model // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(d_model // 2))
    scaled_time = torch.arange(T)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)
