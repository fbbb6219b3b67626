"""The lessons' worked examples as data, for self-checks, plots and tests."""

from __future__ import annotations

import torch

CAT_SAT_DOWN_TOKENS = ("the", "cat", "sat", "down")

# Two-number queries and keys from the lesson ("the cat sat down").
CAT_SAT_DOWN_QUERIES = torch.tensor([[0.0, 1.0], [0.0, 1.0], [2.0, 0.0], [2.0, 0.5]])
CAT_SAT_DOWN_KEYS = torch.tensor([[0.0, 1.0], [2.0, 0.0], [0.5, 0.5], [0.0, 0.5]])
