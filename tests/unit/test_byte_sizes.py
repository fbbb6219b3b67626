"""Sizes in the memory checks' messages (the grader's check of tiled_attention and the notebook's self-check)
are rounded so that nothing that is not 0 reads 0: a block of 384 KiB of scores once read "0 MiB"."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from autograder.text import byte_size

SELFCHECK = Path(__file__).resolve().parents[2] / "assignments" / "attention" / "selfcheck.py"
SIZES = [1, 100, 511, 512, 1023, 1024, 1536, 384 * 1024, 2**20 - 600, 2**20 - 1, 2**20, 1_500_000, 9 * 2**20,
         2**30 - 2**19, 2**30 - 1, 2**30, 64 * 2**30]


@pytest.fixture(scope="module")
def selfcheck_size():
    spec = importlib.util.spec_from_file_location("_byte_sizes_selfcheck", SELFCHECK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module._byte_size


def value_of(text: str) -> float:
    number, unit = re.fullmatch(r"([\d,]+(?:\.\d)?) (B|KiB|MiB|GiB)", text).groups()
    return float(number.replace(",", "")) * {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}[unit]


@pytest.mark.parametrize("n", SIZES)
def test_no_size_reads_zero_and_each_reads_about_what_it_is(n, selfcheck_size):
    shown = byte_size(n)
    assert value_of(shown) > 0, shown
    assert abs(value_of(shown) - n) <= 0.05 * n + 1, (n, shown)  # within the rounding of the unit shown
    assert not shown.startswith(("1024 ", "1024.0 ")), shown  # the next unit up reads 1 instead
    assert selfcheck_size(n) == shown  # the notebook's self-check says the same as the grader


def test_the_examples():
    assert [byte_size(n) for n in (0, 1536, 384 * 1024, 9 * 2**20, 22_600_000, 2**30 - 1, 64 * 2**30)] == \
        ["0 B", "1.5 KiB", "384 KiB", "9.0 MiB", "22 MiB", "1.0 GiB", "64 GiB"]


def test_the_graders_memory_check_names_the_block_in_kib():
    import attention_ref as ref
    from autograder.graders import test_tiles

    assert test_tiles.byte_size(ref.tiled_score_bytes(test_tiles.MEMORY_T, test_tiles.MEMORY_BLOCK)) == "192 KiB"
