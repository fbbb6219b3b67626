"""What the grader counts as tampering in a submission's code: every kind on code that does it, nothing
on honest code (the release, the answer key, every valid variant of the corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.model import tampering
from autograder.model.submission import read_submission

ROOT = Path(__file__).resolve().parents[2]
HONEST = [ROOT / "release" / "attention", ROOT / "solutions" / "attention", ROOT / "tests" / "corpus" / "base.py",
          *sorted((ROOT / "tests" / "corpus" / "valid").glob("*.py"))]

# kind -> code that does it (and nothing else worth counting)
ATTEMPTS = {
    tampering.IMPORTS: ["from attention_ref.masks import *", "import autograder.graders.quiz_key as k",
                        "import importlib\nm = importlib.import_module('attention_ref')",
                        "import glob\nfound = glob.glob('/**/quiz_key.py', recursive=True)"],
    tampering.PATCHES: ["import torch\ntorch.allclose = lambda *a, **k: True",
                        "import torch\ntorch.Tensor.__eq__ = lambda s, o: True",
                        "import builtins\nbuiltins.print = lambda *a: None",
                        "import sys\nsys.modules['selfcheck'] = None",
                        "import time\nsetattr(time, 'perf_counter', lambda: 0.0)",
                        "__builtins__['len'] = lambda x: 0"],
    tampering.WRITES: ["open('/tmp/x', 'w').write('x')", "from pathlib import Path\nPath('/etc/x').write_text('x')",
                       "import os\nos.remove('../notes.txt')", "import torch\ntorch.save({}, '/home/x.pt')"],
    tampering.PROCESSES: ["import subprocess", "import os\nos.kill(1, 9)", "import os\npid = os.fork()",
                          "import ctypes"],
    tampering.FAKE_RESULTS: ["print('All tests passed!')", "open('results.json', 'w').write('{}')",
                             "print('Score: 12/12 checks passed')"],
    tampering.HIDDEN_CODE: ["import base64\nexec(base64.b64decode(b'cHJpbnQoMSk='))", "code = 'x' + '=1'\neval(code)"],
}


def scanned(code: str) -> tampering.Tampering:
    return tampering.scan({"attention": [("cell 1", code)]})


@pytest.mark.parametrize(("kind", "code"), [(k, c) for k, codes in ATTEMPTS.items() for c in codes])
def test_each_kind_of_attempt_is_counted_as_that_kind(kind, code):
    found = scanned(code)
    assert found.counts.get(kind), (code, found)
    assert set(found.counts) == {kind}, found.counts
    assert found.examples and "line" in found.examples[0]


@pytest.mark.parametrize("path", HONEST, ids=lambda p: str(p.relative_to(ROOT)))
def test_honest_code_counts_nothing(path):
    submission = read_submission(path, "honest")
    assert submission.cells, path
    found = tampering.scan(submission.cells)
    assert found.total == 0, found.examples


@pytest.mark.parametrize("code", [
    "import torch\ntorch.backends.cudnn.deterministic = True",  # a setting meant to be set
    "text = 'a/b'.replace('/x', 'y')",  # str.replace is no file
    "with open('notes.txt', 'w') as fh:\n    fh.write('x')",  # its own folder
    "import torch\nx = torch.zeros(3)\nx.data = torch.ones(3)",  # an attribute of a tensor, not of torch
    "def f(self):\n    self.weight = 1",
    "import math\nscale = 1 / math.sqrt(4)",
    "eval('1 + 1')",  # a constant string: nothing hidden
])
def test_honest_idioms_that_look_alike_count_nothing(code):
    assert scanned(code).total == 0, scanned(code).examples


def test_cells_of_a_notebook_share_their_imports():
    found = tampering.scan({"attention": [("cell 1", "import torch as t"), ("cell 2", "t.softmax = None")]})
    assert found.counts == {tampering.PATCHES: 1}
    assert found.examples[0].endswith("torch.softmax replaced")


def test_a_cell_that_does_not_parse_counts_nothing_and_the_counts_survive_a_round_trip():
    found = tampering.scan({"attention": [("cell 1", "def (:"), ("cell 2", "import subprocess")]})
    again = tampering.Tampering.from_json(found.to_json())
    assert again == found and again.summary() == "processes 1"
    assert tampering.Tampering.from_json({"counts": {"imports": "9", "bogus": 3}, "examples": "x"}).total == 0


def test_the_depth_of_a_students_tree_is_never_the_depth_of_the_scans_recursion():
    """A sum of 600 terms nests 600 BinOps: the scan walked it recursively and raised RecursionError,
    which ended a whole class's run. Walked with a stack of its own, it still finds what it looks for."""
    terms = " + ".join(["x"] * 600)
    found = tampering.scan({"attention": [("cell", f"import torch\ntorch.allclose = None\ny = {terms}\n")]})
    assert found.counts == {tampering.PATCHES: 1}
    # too deep for ast at the grader's recursion limit, which a sandbox may raise for its own compiler in an
    # earlier cell: counted as hidden code, not passed over
    deeper = " + ".join(["x"] * 5000)
    found = tampering.scan({"attention": [("cell", f"import torch\ntorch.allclose = None\ny = {deeper}\n")]})
    assert found.counts == {tampering.HIDDEN_CODE: 1}


def test_a_long_chain_of_calls_costs_the_scan_linear_work(walks_per_size):
    """`x.touch().touch()...` makes every call's subtree hold the whole chain: looking for a path in each
    must stop early, or n calls cost n² nodes."""
    work = walks_per_size(lambda n: tampering.scan({"attention": [
        ("cell", "from pathlib import Path\nPath('a')" + ".touch()" * n + "\n")]}), (400, 800))
    assert 0 < work[800] <= 2.2 * work[400], work
