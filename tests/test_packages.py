"""What a submission may import, and torch.compile, where it is graded (issue 46, item 7).

The grading environment offers what attention code commonly imports (`server.OFFERED_PACKAGES`:
pyproject.toml's dependencies install each, and a sandbox sees the site folders they live in). A
module that imports einops at its top earns full marks; an import of anything else is one message that
names the module and what is offered, in every check that needed it; a `@torch.compile` function runs
as written (a sandbox compiles nothing: `server.run_as_written`). Graded through the command line a
course uses, as a student would meet it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from autograder.model.submission import public_files, setup_imports
from autograder.isolation.limits import Limits
from autograder.isolation.proxy import Clock, Student
from autograder.isolation.sandbox import Loads, SandboxChannel, Zygote
from autograder.isolation.server import OFFERED_PACKAGES, missing_module_message

pytestmark = pytest.mark.slow  # a grading run through `python -m autograder`

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
PARTS = ("masks", "scaling", "heads")
NOT_A_PACKAGE = "flash_attn_not_offered"  # a package attention code imports that the grading environment lacks


def hoisted(patch: str) -> str:
    """base.py and a corpus patch as one module whose imports, the patch's too, stand at its top, as a student
    writes them: an import that fails there stops the whole module (in the corpus's order, base.py's names would
    still stand and hide it)."""
    lines = patch.splitlines()
    imports = [line for line in lines if line.startswith(("import ", "from "))]
    rest = [line for line in lines if line not in imports]
    return "\n".join(imports + [(CORPUS / "base.py").read_text(), "", *rest])


SUBMISSIONS = {
    "einops_at_the_top": hoisted((CORPUS / "valid" / "heads_einops_rearrange.py").read_text()),
    "every_offered_package": hoisted("\n".join(f"import {name}" for name in OFFERED_PACKAGES)),
    "missing_at_the_top": hoisted(f"import {NOT_A_PACKAGE}"),
    "missing_in_one_function": hoisted(f"def attention_scores(q, k):\n    import {NOT_A_PACKAGE}\n"
                                       "    return q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"),
    "torch_compile": hoisted((CORPUS / "valid" / "scaling_torch_compile.py").read_text()),
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Each submission's results.json, graded in one run on the parts masks, scaling and heads."""
    folder = tmp_path_factory.mktemp("packages")
    for name, text in SUBMISSIONS.items():
        (folder / f"{name}.py").write_text(text)
    out = folder / "out"
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, sorted(folder.glob("*.py"))),
                          "--out", str(out), "--secret", "packages", "--parts", ",".join(PARTS), "--quiet"],
                         capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    return {name: json.loads((out / name / "results.json").read_text()) for name in SUBMISSIONS}


def _scores(results: dict) -> dict[str, tuple[float, float]]:
    scores: dict[str, tuple[float, float]] = {}
    for test in results["tests"]:
        part = test["name"].split("/")[0]
        got, most = scores.get(part, (0.0, 0.0))
        scores[part] = (got + test["score"], most + test["max_score"])
    return scores


def _full_marks(results: dict) -> bool:
    return all(test["score"] == test["max_score"] for test in results["tests"])


def _failed(results: dict, part: str | None = None) -> list[dict]:
    return [t for t in results["tests"] if t["status"] == "failed" and (part is None or t["name"].startswith(part + "/"))]


def test_the_offered_packages_are_the_projects_dependencies():
    """The message names only what an install from pyproject.toml brings (torch's and numpy's pins included)."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~\[ ;]", spec, maxsplit=1)[0].lower() for spec in declared}
    assert set(OFFERED_PACKAGES) <= names, set(OFFERED_PACKAGES) - names
    locked = {line.split("==")[0].lower() for line in (ROOT / "requirements.lock").read_text().splitlines()}
    assert set(OFFERED_PACKAGES) <= locked, set(OFFERED_PACKAGES) - locked


def test_a_module_that_imports_einops_earns_full_marks(graded):
    """The corpus's einops variant, its import at the top: without einops in the sandbox it scores 0 in every part."""
    results = graded["einops_at_the_top"]
    assert _full_marks(results), _scores(results)
    assert set(_scores(results)) == set(PARTS)


def test_every_offered_package_is_importable_in_the_sandbox(graded):
    results = graded["every_offered_package"]
    assert _full_marks(results), [t["output"] for t in _failed(results)][:2]


def test_an_import_of_a_missing_package_is_one_message_naming_it_in_every_check(graded):
    results = graded["missing_at_the_top"]
    assert all(got == 0 for got, _ in _scores(results).values()), _scores(results)
    failed = _failed(results)
    assert len(failed) == len(results["tests"])
    message = missing_module_message(NOT_A_PACKAGE)
    assert all(message in t["output"] for t in failed), [t["output"] for t in failed if message not in t["output"]][:2]
    assert "`flash_attn_not_offered`, which the grading environment does not have; it offers torch, numpy, einops" in message


def test_an_import_in_one_function_costs_only_the_checks_that_call_it(graded):
    """attention_scores imports the missing package when called: the scaling checks that call it fail naming
    the package; masks and heads (graded with the reference's attention_scores) keep full marks."""
    results = graded["missing_in_one_function"]
    scores = _scores(results)
    assert scores["masks"][0] == scores["masks"][1] and scores["heads"][0] == scores["heads"][1], scores
    failed = _failed(results, "scaling")
    assert failed and all(missing_module_message(NOT_A_PACKAGE) in t["output"] for t in failed), \
        [t["output"] for t in failed][:2]


def test_a_torch_compile_variant_earns_full_marks(graded):
    """Compiled for real, the first call fails in the sandbox (CppCompileError building inductor's precompiled
    header) and its check named an unrelated mistake; run as written it is correct."""
    results = graded["torch_compile"]
    assert _full_marks(results), [t["output"][:600] for t in _failed(results)][:2]


def test_torch_compile_returns_the_function_itself_in_a_sandbox():
    """The sandbox compiles nothing: torch.compile hands back what it was given (a function, a module)."""
    zygote = Zygote(Limits(call_seconds=30), [], public_files(), setup_imports())
    loads = Loads(zygote)
    channel = SandboxChannel(loads)
    student = Student(channel, Clock(Limits(call_seconds=30, budget_seconds=120)))
    code = ("import torch\n"
            "def f(x):\n    return x\n"
            "def compiled_is_itself():\n"
            "    m = torch.nn.Linear(2, 2)\n"
            "    return torch.compile(f) is f and torch.compile(m) is m and torch.compile(mode='max-autotune')(f) is f\n")
    try:
        zygote.wait_ready()
        student.load([("cell", code)])
        assert student.load_errors == []
        assert student.call("compiled_is_itself") is True
    finally:
        channel.close(kill=True)
        loads.close()
        zygote.close()
