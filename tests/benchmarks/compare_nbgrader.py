"""Benchmark: `nbgrader autograde` against our grader on the same class (see tools/bench.py).

    .venv/bin/python tests/benchmarks/compare_nbgrader.py [--students 40] [--jobs N] [--work DIR] [--serial]

The same as `python -m autograder bench`; kept under this name for scripts that call it. It writes
its timings to WORK/timings.json. Not collected by pytest.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tools.bench import main

if __name__ == "__main__":
    sys.exit(main())
