"""Opening an nbgrader course reads the course's own nbgrader_config.py, wherever the caller stands, and
never changes the process's folder (a grading service and its threads share it)."""

from __future__ import annotations

import os

import pytest

from autograder.nbgrader.course import CourseError, open_course


def test_the_course_root_decides_never_the_current_folder(tmp_path, monkeypatch, capfd):
    root, elsewhere = tmp_path / "course", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.db_url = 'sqlite:///the_course.db'\n")
    (elsewhere / "nbgrader_config.py").write_text("c = get_config()\nc.CourseDirectory.db_url = 'sqlite:///cwd.db'\n")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setattr(os, "chdir", lambda path: pytest.fail(f"open_course changed folder to {path}"))
    with pytest.raises(CourseError, match="the_course.db"):  # no gradebook yet: the error names the course's own
        open_course("attention", root)
    assert os.getcwd() == str(elsewhere)
    assert "No nbgrader_config.py" not in capfd.readouterr().err  # the folder it was told not to read is not sought
