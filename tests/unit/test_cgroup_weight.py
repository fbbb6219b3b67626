"""A run's tree of sandbox cgroups weighs, against the processes beside it, as much as one ordinary
process per core: with one process's weight, all of a run's sandboxes together got the CPU of one busy
loop beside them, and on a loaded machine a loaded sandbox was late to fork a part."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autograder.isolation import cgroups


def test_the_tree_weighs_one_process_per_core():
    tree, why_not = cgroups.create(f"autograder-weight-test-{os.getpid()}")
    if tree is None:
        pytest.skip(f"no cgroups to write here: {why_not}")
    try:
        cores = len(os.sched_getaffinity(0))
        if tree["version"] == 1:
            assert Path(tree["folders"]["cpu"], "cpu.shares").read_text().strip() == str(cgroups.V1_SHARES * cores)
        else:
            assert Path(tree["folders"][""], "cpu.weight").read_text().strip() == str(min(10_000, cgroups.V2_WEIGHT * cores))
    finally:
        cgroups.remove_tree(tree)
