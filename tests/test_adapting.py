"""The changes docs/adapting.md documents pass the fast tier unchanged (issue 59, item 3).

In a copy of this checkout (its files as git lists them, this environment linked as its .venv), the test
makes three changes exactly as the page says: a check's points (masks, one more), a hint's words
(masks.fill_zero), and a new check with its buggy variant; then `make release` and `make check` there, both
of which must pass; then it reads the copies that `make release` wrote from the one place of each fact.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import assignment
from autograder.graders.points import part_points
from autograder.hints import HINTS

pytestmark = pytest.mark.slow  # make release (nbgrader, the answer keys executed) and make check in a copy

ROOT = assignment.CHECKOUT_ROOT
POINTS_LINE = '@check("causal_average: row i averages tokens 0..i", points=2)'
NEW_HINT = "0 is a score, not a block: fill blocked scores with -inf"
NEW_CHECK = '''

@check("causal_mask: a single token may attend to itself", points=1)
def test_causal_mask_single_token(student):
    got = as_tensor(student.call("causal_mask", 1), "causal_mask(1)", shape=(1, 1), dtype=torch.bool)
    expect(bool(got[0, 0]), "causal_mask(1)[0, 0]", "True", "False", catalogued("masks.itself"))
'''
NEW_VARIANT = '''# part: masks
# hint: masks.itself
# why: the diagonal is left out, so a sequence of one token has nothing to attend to
def causal_mask(T_q, T_k=None, *, device=None):
    T_k = T_q if T_k is None else T_k
    return torch.ones(T_q, T_k, dtype=torch.bool, device=device).tril(-1)
'''


def checkout_copy(to: Path) -> Path:
    """The files of this checkout that git tracks or would track, copied to `to`, with this environment as its .venv."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, to / name)
    (to / ".venv").symlink_to(Path(sys.prefix))
    return to


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def make(copy: Path, target: str) -> subprocess.CompletedProcess:
    """`make TARGET` in the copy, its .venv taken as installed (it is this one), its own code first on the path."""
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(["make", "-o", ".venv/.installed", target], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=3000)


@pytest.mark.skipif(ROOT is None or shutil.which("make") is None or shutil.which("git") is None,
                    reason="needs the project's checkout, git and make")
def test_the_documented_changes_pass_make_check_in_a_copy(tmp_path):
    copy = checkout_copy(tmp_path / "copy")
    graders = copy / "autograder" / "graders"
    # Points: the points= of a check (docs/adapting.md, "Points", step 1)
    edit(graders / "test_masks.py", POINTS_LINE, POINTS_LINE.replace("points=2", "points=3"))
    # A hint: its words in the catalogue ("Feedback hints", step 1)
    edit(copy / "autograder" / "hints.py", HINTS["masks.fill_zero"], NEW_HINT)
    # A new check, naming a hint of the catalogue, and its buggy variant ("A new check", steps 1 and 3)
    with (graders / "test_masks.py").open("a", encoding="utf-8") as fh:
        fh.write(NEW_CHECK)
    (copy / "tests" / "corpus" / "buggy" / "masks_single_token_blind.py").write_text(NEW_VARIANT, encoding="utf-8")

    for target in ("release", "check"):  # step 2, then step 3 of each
        done = make(copy, target)
        assert done.returncode == 0, f"make {target} failed in the copy:\n{done.stdout[-6000:]}\n{done.stderr[-3000:]}"
    said = done.stdout
    assert re.search(r"\d+ passed", said) and " failed" not in said, said[-2000:]

    masks = part_points("masks") + 2  # one more point, and the new check's
    attention = json.loads((copy / "release" / "attention" / "attention.ipynb").read_text(encoding="utf-8"))
    cell = next(c for c in attention["cells"] if c.get("id") == "grade-masks")
    assert cell["metadata"]["nbgrader"]["points"] == masks
    assert f"| {masks:g} |" in "".join(attention["cells"][0]["source"])  # the table of sections
    for path in ("docs/mistakes.md", "release/attention/selfcheck.py", "assignments/attention/selfcheck.py"):
        assert NEW_HINT in (copy / path).read_text(encoding="utf-8"), path
