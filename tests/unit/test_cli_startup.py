"""The command line's own process starts light: the zygote and the workers import torch while it reads the
course and the submissions, so a torch import here would add a second to every run."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_command_line_does_not_import_torch_or_nbgrader():
    code = "import sys, autograder.cli; print(sorted(m for m in ('torch', 'nbgrader') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", loaded
