"""A grade cell under nbgrader's own autograde (the formgrader's Autograde button) without a course secret:
graded all the same, its score kept, and its output says so first, on stdout (nbgrader gives a grade cell
that writes to stderr no points)."""

from __future__ import annotations

import nbformat
import pytest

from autograder.model.results import CheckResult, GradedSubmission
from autograder.nbgrader import gradecell

PART = "masks"


@pytest.fixture
def graded_as(monkeypatch, tmp_path):
    """grade_part on a tiny notebook in an autograded folder, the graders replaced by checks that earn 3 points
    of 5 (one check passed, one failed); the secret each grading was given."""
    folder = tmp_path / "autograded" / "ada" / "attention"
    folder.mkdir(parents=True)
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import torch")]),
                   folder / "attention.ipynb")
    monkeypatch.chdir(folder)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    secrets = []

    def grade_one(job, backend, limits, release=None):
        secrets.append(job.secret)
        return GradedSubmission(job.submission.id, [CheckResult(PART, "shape", 3.0),
                                                    CheckResult(PART, "values", 2.0, passed=False,
                                                                outputs=["expected 1, got 2"])])

    monkeypatch.setattr(gradecell, "grade_one", grade_one)
    return secrets


@pytest.mark.parametrize("unset", [True, False])
def test_without_a_secret_the_cell_warns_on_stdout_and_keeps_its_score(graded_as, monkeypatch, capsys, unset):
    if unset:
        monkeypatch.delenv(gradecell.SECRET_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(gradecell.SECRET_VARIABLE, "")
    assert gradecell.grade_part(PART) == 3.0
    out, err = capsys.readouterr()
    assert err == ""
    assert out.startswith("Warning: $AUTOGRADER_SECRET is not set where nbgrader autograded this notebook"), out
    assert "empty course secret" in out and f"{PART}: 3 / 5 points" in out
    assert graded_as == [""]


def test_with_a_secret_no_warning(graded_as, monkeypatch, capsys):
    monkeypatch.setenv(gradecell.SECRET_VARIABLE, "course-secret")
    assert gradecell.grade_part(PART) == 3.0
    out, err = capsys.readouterr()
    assert "Warning" not in out and "secret" not in out and err == ""
    assert out.startswith("Note: attention.ipynb: answer cell") and f"\n{PART}: 3 / 5 points" in out
    assert graded_as == ["course-secret"]


def test_the_warning_is_empty_only_with_a_secret():
    assert gradecell.secret_warning("s") == ""
    assert gradecell.secret_warning("").startswith("Warning: $AUTOGRADER_SECRET is not set")


def test_under_autograde_the_courses_own_release_is_graded_against(tmp_path, monkeypatch):
    """As with `grade --nbgrader`, the setup cells that run are those of the course's release (issue 59)."""
    import json
    import shutil

    from autograder import assignment

    course = tmp_path / "course"
    shutil.copytree(assignment.release_folder(), course / "release" / "attention")
    setup_of = course / "release" / "attention" / "attention.ipynb"
    nb = json.loads(setup_of.read_text())
    next(c for c in nb["cells"] if c.get("id") == "setup")["source"] = ["import numpy as np\n"]
    setup_of.write_text(json.dumps(nb))
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    folder = course / "autograded" / "ada" / "attention"
    folder.mkdir(parents=True)
    shutil.copy(assignment.release_folder() / "attention.ipynb", folder)
    monkeypatch.chdir(folder)
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    ran = []
    monkeypatch.setattr(gradecell, "grade_one", lambda job, *_: ran.append(job.submission.cells["attention"][0])
                        or GradedSubmission(job.submission.id, [CheckResult(PART, "shape", 1.0)]))
    assert gradecell.grade_part(PART) == 1.0
    assert ran == [("attention.ipynb, cell setup", "import numpy as np\n")]
