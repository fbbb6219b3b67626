"""The package installed normally grades as the Gradescope recipe (docs/gradescope.md) does, and stays safe there.

A wheel of the project in a fresh environment (tests/adversarial/installed.py), then, as run_autograder does:

    cd /autograder/source
    python -m autograder grade SUBMISSION... --out DIR --secret "$(cat secret.txt)" --quiet

twice: from a folder outside the project that holds only the course secret (the installed package
grades), and from a folder holding a copy of the project, as /autograder/source holds the autograder
zip (`python -m` then finds the copy's autograder first, and the installed copy sits in site-packages
beside it). A correct module (tests/corpus/base.py) and the answer-key notebooks, uploaded as plain
files, earn full marks; a submission made of imports of the installed reference and quiz key earns
nothing; nothing is written into the installed package or the project copy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from adversarial import installed as installing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SECRET = "gradescope-course-secret"
CODED_PARTS = ("masks", "scaling", "heads", "positions", "timing", "tiles")  # what base.py answers (not the quiz)
IMPORTS = """
import importlib

for _module in ("attention_ref.masks", "attention_ref.scaling", "attention_ref.heads", "attention_ref.positions",
                "attention_ref.timing", "attention_ref", "autograder.graders.quiz_key"):
    try:
        globals().update({k: v for k, v in vars(importlib.import_module(_module)).items() if not k.startswith("__")})
    except Exception:  # noqa: BLE001 - take whatever can be had
        pass
for _question, _letter in dict(globals().get("ANSWERS", {})).items():
    globals()["answer_" + _question] = _letter
"""


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> installing.Installed:
    return installing.installed(tmp_path_factory)


def _tree(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(folder)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in folder.rglob("*")}


@pytest.fixture(scope="module", params=["elsewhere", "source"])
def gradescope(request, venv, tmp_path_factory) -> dict:
    folder = tmp_path_factory.mktemp(f"gradescope-{request.param}")
    source, submissions, grading = folder / "source", folder / "submissions", folder / "grading"
    if request.param == "source":
        shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build",
                                                                     ".demo", ".pytest_cache", ".mypy_cache"))
    else:
        source.mkdir()
    (source / "secret.txt").write_text(SECRET)
    uploads = {
        "submission": {"answers.py": (ROOT / "tests" / "corpus" / "base.py").read_text()},
        "imports": {"answers.py": IMPORTS},
        "notebooks": {name: (ROOT / "solutions" / "attention" / name).read_text() for name in ("attention.ipynb", "quiz.ipynb")},
    }
    if request.param == "source":
        del uploads["notebooks"]  # the installed package's own notebooks are what the other run shows
    for name, files in uploads.items():
        (submissions / name).mkdir(parents=True)
        for file, text in files.items():
            (submissions / name / file).write_text(text)
    watched = [venv.site / "autograder", venv.site / "attention_ref", source]
    env = {k: v for k, v in venv.env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    # Python caches the modules a command imports as it starts, as for any program: that is not grading.
    subprocess.run([str(venv.python), "-m", "autograder", "grade", "--help"], capture_output=True, cwd=source, env=env,
                   check=True, timeout=300)
    before = {str(p): _tree(p) for p in watched}
    run = subprocess.run([str(venv.python), "-m", "autograder", "grade", *(str(submissions / n) for n in uploads),
                          "--out", str(grading), "--secret", (source / "secret.txt").read_text(), "--quiet", "--jobs", "2"],
                         capture_output=True, text=True, cwd=source, env=env, timeout=900)
    results = {}
    for name in ("submission", "imports", "notebooks"):
        path = grading / name / "results.json"
        results[name] = json.loads(path.read_text()) if path.exists() else None
    if results["submission"]:  # as run_autograder does
        shutil.copy(grading / "submission" / "results.json", folder / "results.json")
    after = {str(p): _tree(p) for p in watched}
    return {"mode": request.param, "run": run, "results": results,
            "changed": {p: sorted(set(before[p].items()) ^ set(after[p].items()))[:10] for p in before if before[p] != after[p]},
            "grades": (grading / "grades.csv").read_text() if (grading / "grades.csv").exists() else ""}


def test_the_wheel_is_a_normal_install(venv, tmp_path):
    """attention_ref and autograder come from the environment's site-packages, not from the checkout."""
    found = subprocess.run([str(venv.python), "-c", "import attention_ref, autograder; "
                            "print(attention_ref.__file__); print(autograder.__file__)"],
                           capture_output=True, text=True, cwd=tmp_path, env=venv.env(), check=True).stdout.split()
    assert all(Path(f).is_relative_to(venv.site) for f in found), found


def _tests(gradescope: dict, name: str) -> list[dict]:
    results = gradescope["results"][name]
    assert results is not None, f"no results.json for {name}: {gradescope['grades']}\n{gradescope['run'].stderr[-2000:]}"
    return results["tests"]


def test_the_installed_grader_grades_as_on_gradescope(gradescope):
    run = gradescope["run"]
    assert run.returncode == 0, run.stderr[-3000:]
    assert "grader error" not in gradescope["grades"], gradescope["grades"]
    tests = _tests(gradescope, "submission")
    coded = [t for t in tests if t["name"].split("/")[0] in CODED_PARTS]
    assert {t["name"].split("/")[0] for t in coded} == set(CODED_PARTS)
    assert all(t["score"] == t["max_score"] for t in coded), [t["name"] for t in coded if t["score"] != t["max_score"]]


def test_the_answer_key_notebooks_earn_full_marks_installed(gradescope):
    if gradescope["mode"] == "source":
        pytest.skip("graded from outside the project only")
    tests = _tests(gradescope, "notebooks")
    assert {t["name"].split("/")[0] for t in tests} == {*CODED_PARTS, "quiz"}
    assert all(t["score"] == t["max_score"] for t in tests), [t["name"] for t in tests if t["score"] != t["max_score"]]


def test_imports_of_the_installed_reference_and_quiz_key_earn_nothing(gradescope):
    """The installed reference and graders are as hidden from a sandbox as the checkout's."""
    earned = {t["name"]: t["score"] for t in _tests(gradescope, "imports") if t["score"]}
    assert not earned, earned


def test_grading_writes_nothing_into_the_installed_package_or_the_project(gradescope):
    """No __pycache__ (the graders' included, which pytest would cache rewritten), nothing at all."""
    assert not gradescope["changed"], f"grading wrote here (a __pycache__?): {gradescope['changed']}"
