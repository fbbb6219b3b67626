"""The Gradescope autograder zip, end to end, as Gradescope uses it.

`python -m autograder gradescope` builds the zip (with the locked wheels, so that set-up runs offline);
it is unpacked into a fresh root laid out as Gradescope's /autograder (`AUTOGRADER_ROOT`), its
`setup.sh` installs, and its `run_autograder` grades one upload per root, under Gradescope's limits
(Docker's default privileges, half a CPU, 768 MB: tests/hosts.py) where this machine can emulate them.
Each results.json must pass Gradescope's documented format (`gradescope.check_results`).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

import hosts
from autograder import gradescope

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SECRET = "gradescope-zip-secret"
LIMITS = {"cpu": 0.5, "memory": "768M"}
MAX_SUBMISSIONS = 3


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """The zip, and a root its setup.sh installed into (shared by every upload: each gets a copy of it)."""
    work = tmp_path_factory.mktemp("gradescope-zip")
    wheels = work / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "-d", str(wheels),
                    "-r", str(ROOT / "requirements.lock")], check=True, capture_output=True, timeout=900)
    (work / "secret").write_text(SECRET + "\n")
    zip_path = work / "autograder.zip"
    made = subprocess.run([sys.executable, "-m", "autograder", "gradescope", "--out", str(zip_path), "--secret-file",
                           str(work / "secret"), "--visible", "masks/*", "--max-submissions", str(MAX_SUBMISSIONS),
                           "--wheels", str(wheels)], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert made.returncode == 0, made.stderr[-3000:]
    root = Path(tempfile.mkdtemp(prefix="autograder-", dir="/tmp"))  # a path every uid can reach, as /autograder
    root.chmod(0o755)
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(root / "source")
        names = archive.namelist()
    for name in ("setup.sh", "run_autograder"):  # zipfile keeps no modes; Gradescope's unzip does
        (root / "source" / name).chmod(0o755)
    setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], capture_output=True, text=True,
                           env={**os.environ, "AUTOGRADER_ROOT": str(root)}, timeout=900)
    assert setup.returncode == 0, setup.stderr[-3000:]
    yield {"zip": zip_path, "names": names, "root": root, "listing": made.stdout}
    shutil.rmtree(root, ignore_errors=True)


def upload(built: dict, files: dict[str, str | bytes], previous: int = 0) -> dict:
    """Gradescope's run for one upload: a root of its own, the upload in submission/, run_autograder run."""
    root = Path(tempfile.mkdtemp(prefix="upload-", dir="/tmp"))
    root.chmod(0o755)
    try:
        (root / "source").symlink_to(built["root"] / "source")
        (root / "venv").symlink_to(built["root"] / "venv")
        (root / "submission").mkdir()
        for name, content in files.items():
            path = root / "submission" / name
            path.write_bytes(content) if isinstance(content, bytes) else path.write_text(content)
        if previous:
            earlier = [{"score": 100.0 + i, "results": {"score": 100.0 + i, "tests": []}} for i in range(previous)]
            (root / "submission_metadata.json").write_text(json.dumps({"previous_submissions": earlier}))
        command = ["bash", str(root / "source" / "run_autograder")]
        why = hosts.available("docker") or hosts.limits_available()
        if not why:
            command = hosts.command("docker", command, **LIMITS)
        run = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "AUTOGRADER_ROOT": str(root)},
                             timeout=900)
        results = root / "results" / "results.json"
        data = json.loads(results.read_text()) if results.is_file() else None
        return {"run": run, "results": data, "emulated": not why}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def notebooks() -> dict[str, str]:
    return {name: (ROOT / "solutions" / "attention" / name).read_text() for name in ("attention.ipynb", "quiz.ipynb")}


def test_the_zip_holds_what_gradescope_runs_and_setup_keeps_the_secret_to_root(built):
    assert {"setup.sh", "run_autograder", "gradescope.json", "secret.txt", "requirements.lock"} <= set(built["names"])
    assert any(n.endswith(".whl") and "/" not in n for n in built["names"])  # this package
    assert any(n.startswith("wheels/torch-") for n in built["names"])  # offline set-up
    assert not any(n.startswith(("attention_ref/", "tests/", "solutions/")) for n in built["names"])
    mode = (built["root"] / "source" / "secret.txt").stat().st_mode
    assert not mode & (stat.S_IRWXG | stat.S_IRWXO), oct(mode)


def test_the_answer_key_earns_full_marks_in_gradescopes_format(built):
    graded = upload(built, notebooks())
    assert graded["run"].returncode == 0, graded["run"].stderr[-3000:]
    data = graded["results"]
    assert gradescope.check_results(data) == []
    tests = data["tests"]
    counted = [t for t in tests if not t["name"].startswith("quiz/")]  # the checkout's quiz is a self-check one
    assert data["score"] == sum(t["max_score"] for t in counted) > 0
    assert data["output"].startswith(f"Total: {data['score']:g} / {data['score']:g}")
    assert {t["visibility"] for t in tests if t["name"].startswith("masks/")} == {"visible"}
    assert {t["visibility"] for t in tests if t["name"].startswith("heads/")} == {"after_due_date"}
    assert data["stdout_visibility"] == "hidden" and data["execution_time"] > 0
    assert gradescope.ONE_UPLOAD in graded["run"].stdout  # on the log only instructors see
    assert not any({"chosen", "right"} & set(t.get("extra_data", {})) for t in tests)  # the key's letters stay out


def test_a_wrong_answer_costs_its_checks_and_says_why(built):
    source = (ROOT / "tests" / "corpus" / "base.py").read_text()
    wrong = source.replace("return scores.masked_fill(~mask, float(\"-inf\"))", "return scores.masked_fill(mask, float(\"-inf\"))")
    assert wrong != source
    data = upload(built, {"answers.py": wrong})["results"]
    assert gradescope.check_results(data) == []
    failed = [t for t in data["tests"] if t["score"] < t["max_score"]]
    assert failed and all(t["name"].startswith(("masks/", "scaling/", "heads/", "quiz/", "tiles/")) for t in failed)
    assert any(t["name"].startswith("masks/apply_mask") and t["output"] for t in failed)


def test_a_zip_of_one_notebook_is_graded_and_the_summary_says_what_was_found(built):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("my work/attention (2).ipynb", notebooks()["attention.ipynb"])
    data = upload(built, {"upload.zip": archive.getvalue()})["results"]
    assert gradescope.check_results(data) == []
    assert "attention.ipynb read from" in data["output"] and "no quiz.ipynb found" in data["output"], data["output"]
    parts = {t["name"].split("/")[0]: t["score"] for t in data["tests"] if t["score"]}
    assert "masks" in parts and "quiz" not in parts


def test_results_are_kept_within_the_stated_bound_without_touching_a_score():
    tests = [{"name": f"masks/check {i}", "score": 1.0, "max_score": 1.0, "status": "passed", "output": "x" * 50_000,
              "extra_data": {"figures": [{"points": list(range(5000))}]}} for i in range(40)]
    data = gradescope.bounded({"score": 40.0, "output": "Total: 40 / 40", "tests": tests})
    assert len(json.dumps(data, indent=1).encode()) <= gradescope.MAX_RESULTS_BYTES
    assert [t["score"] for t in data["tests"]] == [1.0] * 40 and "cut short" in data["tests"][0]["output"]
    small = {"score": 1.0, "tests": [{"name": "a/b", "score": 1.0, "output": "ok", "extra_data": {"figures": [1]}}]}
    assert gradescope.bounded(json.loads(json.dumps(small))) == small


# Uploads that try the zip's own weak spots: the installed reference and the secret beside it, the
# grader's socket, the container's memory. Each must be graded (zero) and leave results behind.
HOSTILE = {
    "steal": """
import glob, os, sys
_root = os.path.dirname(os.path.realpath(sys.prefix))
for _path in glob.glob(sys.prefix + "/lib/python3*/site-packages/attention_ref/*.py"):
    try:
        exec(open(_path).read(), globals())
    except Exception:
        pass
try:
    from attention_ref import *
except Exception:
    pass
try:
    SECRET = open(_root + "/source/secret.txt").read()
except Exception:
    SECRET = ""
""",
    "forged_reply": """
import os, stat, struct
for _fd in range(3, 64):
    try:
        if stat.S_ISSOCK(os.fstat(_fd).st_mode):
            _forged = b"R" + b"breach: the reference can be read" * 8
            os.write(_fd, struct.pack("<Q", len(_forged)) + _forged)
    except OSError:
        pass
""",
    "memory_bomb": "_hoard = [bytearray(1 << 26) for _ in range(1 << 10)]\n",
}


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_a_hostile_upload_is_graded_earns_nothing_and_leaves_results(built, kind):
    graded = upload(built, {"answers.py": HOSTILE[kind]})
    assert graded["run"].returncode == 0, graded["run"].stderr[-3000:]
    data = graded["results"]
    assert gradescope.check_results(data) == []
    assert data["tests"], data.get("output")
    earned = {t["name"]: t["score"] for t in data["tests"] if t["score"]}
    assert not earned, earned
    assert SECRET not in json.dumps(data)


def test_past_the_submission_limit_an_upload_is_not_graded_and_the_last_score_stands(built):
    data = upload(built, notebooks(), previous=MAX_SUBMISSIONS)["results"]
    assert gradescope.check_results(data) == []
    assert data["score"] == 100.0 + MAX_SUBMISSIONS - 1
    assert f"all {MAX_SUBMISSIONS} submissions" in data["output"]


# Uploads that broke the grader's own side (a scan, a notebook reader, a literal): correct work around
# them, each graded with its points, never "could not grade this upload".
BROKE_THE_GRADER = {"long_sum": "answers.py", "nb_cell_source_not_text": "attention.ipynb",
                    "nb_helper_comment_line_separator": "attention.ipynb", "nb_colliding_integers_quiz": "quiz.ipynb"}


@pytest.mark.parametrize("case", list(BROKE_THE_GRADER))
def test_an_upload_that_broke_the_graders_own_side_is_graded(built, case, tmp_path):
    from adversarial.catalogue import BY_NAME, materialize

    written = materialize(BY_NAME[case], tmp_path, {})
    name = BROKE_THE_GRADER[case]
    files = {name: written.read_bytes()}
    if name.endswith(".ipynb"):
        files = {**notebooks(), **files}
    graded = upload(built, files)
    assert graded["run"].returncode == 0, graded["run"].stderr[-3000:]
    data = graded["results"]
    assert gradescope.check_results(data) == [] and "could not grade" not in data["output"], data["output"]
    masks = [t for t in data["tests"] if t["name"].startswith("masks/")]
    assert masks and all(t["score"] == t["max_score"] for t in masks), [t["name"] for t in masks if t["score"] < t["max_score"]]
