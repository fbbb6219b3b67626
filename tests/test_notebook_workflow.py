"""Notebooks as students leave them, graded as the notebook says they run (issue 46): the answer key with
a cell of constants its answers use, with an old attempt above the answer cell that Restart & Run All
replaces, and with 40 MiB of plots left in its outputs, each earns what the answer key earns."""

from __future__ import annotations

import base64
import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
KEY = ROOT / "solutions" / "attention"
PARTS = "masks,scaling"
CONSTANTS = 'import math\nNEG_INF = float("-inf")\nT_MAX = 2 ** 14\nHALF_PI = math.pi / 2\nprint("constants set")\n'
USES_THEM = ("def apply_mask(scores, mask, fill=NEG_INF):\n"
             "    \"\"\"Disallowed scores become `fill` (-inf by default), on a new tensor.\"\"\"\n"
             "    assert scores.shape[-1] <= T_MAX and HALF_PI > 1\n"
             "    return scores.masked_fill(~mask, fill)\n")
OLD_ATTEMPT = "def apply_mask(scores, mask):\n    return scores + mask  # my first try\n"


def _code(source: str) -> dict:
    return {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": source}


def _key() -> dict:
    return json.loads((KEY / "attention.ipynb").read_text())


def _index(cells: list[dict], grade_id: str) -> int:
    return next(i for i, c in enumerate(cells) if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def _with_constants() -> dict:
    notebook = _key()
    cells = notebook["cells"]
    at = _index(cells, "masks-apply_mask")
    cells[at] = {**cells[at], "source": USES_THEM}
    cells.insert(at, _code(CONSTANTS))
    return notebook


def _with_an_old_attempt() -> dict:
    notebook = _key()
    cells = notebook["cells"]
    at = _index(cells, "masks-apply_mask")
    cells.insert(at, {**json.loads(json.dumps(cells[at])), "source": OLD_ATTEMPT})
    return notebook


def _with_plots_left() -> dict:
    notebook = _key()
    picture = base64.b64encode(os.urandom(4 * 2**20)).decode()  # a plot's PNG does not compress either
    for cell in [c for c in notebook["cells"] if c["cell_type"] == "code"][:10]:
        cell["outputs"] = [{"output_type": "display_data", "metadata": {}, "data": {"image/png": picture}}]
    return notebook


CASES = {"constants_cell": _with_constants, "old_attempt_above": _with_an_old_attempt, "plots_left": _with_plots_left}


def test_notebooks_as_students_leave_them_earn_what_the_answer_key_earns(tmp_path):
    folders = [tmp_path / "answer_key"]
    (tmp_path / "answer_key").mkdir()
    (tmp_path / "answer_key" / "attention.ipynb").write_text(json.dumps(_key()))
    for name, make in CASES.items():
        folders.append(tmp_path / name)
        folders[-1].mkdir()
        (folders[-1] / "attention.ipynb").write_text(json.dumps(make()))
    assert (tmp_path / "plots_left" / "attention.ipynb").stat().st_size > 40 * 2**20
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, folders), "--out", str(tmp_path / "out"),
                          "--parts", PARTS, "--quiet"], env={**os.environ, "AUTOGRADER_SECRET": "workflow"},
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    rows = {r["submission"]: r for r in csv.DictReader((tmp_path / "out" / "grades.csv").open())}
    full = {part: rows["answer_key"][part] for part in PARTS.split(",")}
    assert all(float(score) > 0 for score in full.values()), full
    for name in CASES:
        assert {part: rows[name][part] for part in PARTS.split(",")} == full, (name, rows[name]["status"])
    status = rows["old_attempt_above"]["status"]
    assert "appears in 2 cells" in status and "`apply_mask` is defined in more than one: the last definition is graded" in status
