"""The released notebooks open unmodified in JupyterLab: plugged into nbgrader by `nbgrader_config.py`.

When JupyterLab connects a notebook to its kernel it writes the kernel's `language_info` into the
notebook's metadata (`NotebookPanel._updateLanguage`), and a metadata value that is not deep-equal to
what was there marks the notebook modified. A source notebook saved with `{"name": "python"}` only gave
a release that every student saw as modified the moment it opened, before they had typed anything.
So each notebook is given the `language_info` that ipykernel reports for the Python that builds the
release (the course's): the version included, which JupyterLab compares too, so a kernel on another
Python version still rewrites it.

nbgrader imports this module whenever it reads its configuration: keep its imports light.
"""

from __future__ import annotations

import copy
from typing import Any

from nbgrader.preprocessors import NbGraderPreprocessor


def kernel_language_info() -> dict:
    """What an ipykernel kernel on this Python reports as its `language_info` (its kernel_info reply)."""
    from ipykernel.ipkernel import IPythonKernel

    return copy.deepcopy(IPythonKernel.language_info)


class KernelInfo(NbGraderPreprocessor):
    """Writes the kernel's `language_info` into each released notebook's metadata, as JupyterLab would."""

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        nb.metadata["language_info"] = kernel_language_info()
        return nb, resources
