"""The code stubs of the release, per notebook: plugged into nbgrader by `nbgrader_config.py`.

nbgrader imports this module whenever it reads that configuration: keep its imports light.
"""

from __future__ import annotations

from nbgrader.preprocessors import ClearSolutions
from traitlets import Dict


class ClearSolutionsPerNotebook(ClearSolutions):
    """nbgrader's ``ClearSolutions`` with a code stub per notebook.

    ``ClearSolutions.code_stub`` maps a *language* to the stub that replaces every
    ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region, one setting for the whole run. This
    subclass only adds ``notebook_code_stubs``, which maps a notebook id (its file name without
    ``.ipynb``) to a ``{language: stub}`` dict that overrides ``code_stub`` for that notebook; the
    clearing itself is ClearSolutions' own code, unchanged.
    """

    code_stub: dict[str, str]  # ClearSolutions' own trait, declared for the type checker (nbgrader is untyped)
    notebook_code_stubs = Dict(
        {},
        help="Notebook id -> {language: code stub}: overrides ClearSolutions.code_stub for the notebooks it names.",
    ).tag(config=True)

    def preprocess(self, nb, resources):
        notebook_id = str((resources.get("nbgrader") or {}).get("notebook"))
        override = self.notebook_code_stubs.get(notebook_id)
        if not override:
            return super().preprocess(nb, resources)
        default: dict[str, str] = self.code_stub
        self.code_stub = {**default, **override}
        try:
            return super().preprocess(nb, resources)
        finally:
            self.code_stub = default
