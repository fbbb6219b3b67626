"""Fixtures shared by the unit tests."""

from __future__ import annotations

import ast
from typing import Callable

import pytest


@pytest.fixture
def walks_per_size(monkeypatch) -> Callable[[Callable[[int], object], tuple[int, ...]], dict[int, int]]:
    """How many nodes `ast.walk` yields while `work(n)` runs, for each n: linear work doubles with n,
    quadratic work quadruples."""
    real = ast.walk
    walked = [0]

    def counting(node):
        for found in real(node):
            walked[0] += 1
            yield found

    monkeypatch.setattr(ast, "walk", counting)

    def measure(work: Callable[[int], object], sizes: tuple[int, ...]) -> dict[int, int]:
        counts = {}
        for n in sizes:
            walked[0] = 0
            work(n)
            counts[n] = walked[0]
        return counts

    return measure
