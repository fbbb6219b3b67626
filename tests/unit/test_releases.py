"""The release a run grades against (autograder/releases.py): the grader's own copy unless a run says
otherwise (an nbgrader course's build), and what comes from it follows it: the setup cells, the public
helpers, the quiz's build, the digest that decides whether an earlier result stands."""

from __future__ import annotations

import json
import shutil

import pytest

from autograder import assignment, quiz, releases
from autograder.pool import batch
from autograder.model import submission


def course_release(tmp_path, setup_line: str = "import numpy as np\n"):
    """A copy of the grader's release whose attention setup cell also runs `setup_line`."""
    folder = tmp_path / "release"
    shutil.copytree(assignment.release_folder(), folder)
    path = folder / "attention.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    setup = next(c for c in nb["cells"] if c.get("id") == "setup")
    setup["source"] = ["".join(setup["source"]) + "\n" + setup_line]
    path.write_text(json.dumps(nb), encoding="utf-8")
    (folder / "selfcheck.py").write_text("# the course's own\n", encoding="utf-8")
    return releases.read(folder, "a course's release")


def setup_code(release=None) -> str:
    return next(code for grade_id, code, _ in submission.release_cells("attention", release) if grade_id == "setup")


def test_by_default_the_grader_grades_against_its_own_release():
    assert releases.or_own(None) is releases.grader_release()
    assert set(releases.grader_release().files) == set(releases.file_names())


def test_what_comes_from_the_release_follows_the_one_given(tmp_path):
    ours = (setup_code(), submission.public_files()["selfcheck.py"], batch.grader_version())
    theirs = course_release(tmp_path)
    assert setup_code(theirs).rstrip().endswith("import numpy as np") and setup_code(theirs).startswith(ours[0])
    assert submission.public_files(theirs)["selfcheck.py"] == b"# the course's own\n"
    assert batch.grader_version(theirs) != ours[2]  # a result graded against another release is graded again
    assert quiz.released_mode(theirs) == "self-check"
    assert (setup_code(), submission.public_files()["selfcheck.py"], batch.grader_version()) == ours


def test_nothing_remembers_a_release_two_runs_in_one_process_each_get_theirs(tmp_path):
    """A grading service grades several courses in one process: a submission is read against the release
    it is given, whatever was read before it."""
    theirs = course_release(tmp_path)
    path = tmp_path / "sub.ipynb"
    path.write_bytes(assignment.release_folder().joinpath("attention.ipynb").read_bytes())
    first = submission.read_submission(path, "a", theirs).cells["attention"][0][1]
    second = submission.read_submission(path, "b").cells["attention"][0][1]
    assert first.rstrip().endswith("import numpy as np") and not second.rstrip().endswith("import numpy as np")
    assert submission.read_submission(path, "c", theirs).cells["attention"][0][1] == first


def test_a_release_without_its_notebooks_is_not_one(tmp_path):
    (tmp_path / "quiz.ipynb").write_text("{}")
    with pytest.raises(FileNotFoundError, match="attention.ipynb is missing"):
        releases.read(tmp_path)


def test_the_release_travels_to_workers_as_data(tmp_path):
    """A worker is sent the files, never the course's folder (a Dask worker may be on another machine)."""
    from autograder.pool.worker import WorkerSettings, release_of

    theirs = course_release(tmp_path)
    settings = WorkerSettings.from_json(json.loads(json.dumps(WorkerSettings(release=dict(theirs.files)).to_json())))
    assert release_of(settings).files == theirs.files
    assert release_of(WorkerSettings()) is None  # the grader's own copy


def test_a_run_given_a_release_folder_grades_against_it(tmp_path):
    """`RunOptions.release` (the grading service passes the exchange's outbound/<assignment>/): read once, and a
    folder that is not a release is the run's error, naming it."""
    from autograder.classrun import RunError, _given_release

    theirs = course_release(tmp_path)
    given = _given_release(tmp_path / "release")
    assert given is not None and given.files == theirs.files
    assert _given_release(None) is None
    with pytest.raises(RunError, match="not a release to grade against"):
        _given_release(tmp_path / "nothing")
