"""The command line's own process starts light: the zygote and the workers import torch while it reads the
course and the submissions, so a torch import here would add a second to every run."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_command_line_does_not_import_torch_or_nbgrader():
    code = "import sys, autograder.cli; print(sorted(m for m in ('torch', 'nbgrader') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", loaded


def test_a_reports_folder_that_cannot_be_made_is_a_usage_error_before_anything_starts(tmp_path, capsys, monkeypatch):
    """exit status 2 and the reason, where it used to end in a traceback once the workers had started."""
    from autograder import classrun, cli

    started = []
    monkeypatch.setattr(classrun, "_pool", lambda *args: started.append(args))
    submission = tmp_path / "s.py"
    submission.write_text("x = 1\n")
    (tmp_path / "a_file").write_text("")
    assert cli.main(["grade", str(submission), "--out", str(tmp_path / "a_file" / "reports"), "--secret", "x"]) == 2
    assert "not a folder the reports can be written to" in capsys.readouterr().err
    assert not started
