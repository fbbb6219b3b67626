"""nbgrader's converter, run without nbconvert's and nbformat's copies of each notebook and the second
validation before writing: the same text is written, and everything is put back afterwards."""

from __future__ import annotations

import copy

import nbformat
from nbconvert.exporters import NotebookExporter, exporter, notebook
from nbformat import validator
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbformat.v4 import nbjson

from autograder.nbgrader.gradebook import _notebooks_uncopied_and_validated_once


def _notebook() -> nbformat.NotebookNode:
    return new_notebook(cells=[
        new_markdown_cell("# Part one\nsome text\nover lines"),
        new_code_cell("x = 1\nprint(x)", outputs=[new_output("stream", name="stdout", text="1\n2\n")],
                      metadata={"trusted": True, "nbgrader": {"grade": False}}),
        new_code_cell("x", outputs=[new_output("execute_result", data={"text/plain": "1"}, execution_count=2)]),
    ], metadata={"orig_nbformat": 3, "kernelspec": {"name": "python3", "display_name": "Python 3"}})


def test_the_same_text_is_written():
    nb = _notebook()  # each cell's id is drawn anew by every new_*_cell: one notebook, copied before either run
    written, _ = NotebookExporter().from_notebook_node(copy.deepcopy(nb))
    with _notebooks_uncopied_and_validated_once():
        without_copies, _ = NotebookExporter().from_notebook_node(copy.deepcopy(nb))
    assert without_copies == written
    assert '"trusted"' not in written and '"orig_nbformat"' not in written  # what writing strips, stripped


def test_inside_the_notebook_is_itself_outside_a_copy():
    nb = _notebook()
    with _notebooks_uncopied_and_validated_once():
        assert exporter.copy.deepcopy(nb) is nb and nbjson.copy.deepcopy(nb) is nb and validator.deepcopy(nb) is nb
        assert validator.normalize(nb)[1] is nb  # nbconvert normalises the notebook itself, not a copy
    assert exporter.copy is copy and nbjson.copy is copy and notebook.nbformat is nbformat
    assert validator.deepcopy is copy.deepcopy and validator.normalize(nb)[1] is not nb
    assert exporter.copy.deepcopy(nb) is not nb
