"""The graders proven on known submissions, through the command line a course would use.

Every valid variant must score full marks; every buggy one must lose points in
its own part only, with its docs/mistakes.md hint in the feedback; an all-stubs
submission scores 0 everywhere without a grader error; a submission with one
part done gets full marks on that part alone.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tools.demo import stubbed

CORPUS = Path(__file__).parent / "corpus"
PARTS = ("masks", "scaling", "heads", "positions", "timing")


def _header(path: Path) -> dict[str, str]:
    fields = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(":")
        fields[key.strip()] = value.strip()
    return fields


VARIANTS = sorted((CORPUS / "valid").glob("*.py")) + sorted((CORPUS / "buggy").glob("*.py"))


def variant_module(base: str, patch: str) -> str:
    """base.py, then the patch, as one module; a patch's `from __future__` imports move to the top,
    the only place Python allows them."""
    futures = [line for line in patch.splitlines() if line.startswith("from __future__ import")]
    rest = "\n".join(line for line in patch.splitlines() if line not in futures)
    return "\n".join(futures + [base, "", rest])


VALUE_PARTS = ("masks", "scaling", "heads", "positions")


@pytest.fixture(scope="session")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Grade the whole corpus through the grader's command line: every submission on the value parts,
    and (the timing part's checks wait on the clock, so only where they tell something) base.py, the
    stubs and the timing variants on the timing part too."""
    folder = tmp_path_factory.mktemp("corpus")
    base = (CORPUS / "base.py").read_text()
    (folder / "base.py").write_text(base)
    for variant in VARIANTS:
        (folder / f"{variant.parent.name}__{variant.stem}.py").write_text(variant_module(base, variant.read_text()))
    (folder / "all_stubs.py").write_text(stubbed(base))
    masks_names = {"causal_average", "causal_mask", "padding_mask", "apply_mask", "combine_masks"}
    (folder / "only_masks.py").write_text(stubbed(base, keep=frozenset(masks_names)))
    everyone = sorted(map(str, folder.glob("*.py")))
    timed = [p for p in everyone if "__timing_" in p or Path(p).stem in ("base", "all_stubs", "only_masks")]
    merged: dict[str, dict] = {}
    for paths, parts, out in ((everyone, VALUE_PARTS, folder / "out"), (timed, ("timing",), folder / "out-timing")):
        run = subprocess.run([sys.executable, "-m", "autograder", "grade", *paths, "--out", str(out), "--secret", "corpus",
                              "--parts", ",".join(parts), "--quiet"], capture_output=True, text=True, timeout=3000)
        assert run.returncode == 0, run.stderr[-3000:]
        for row in csv.DictReader((out / "grades.csv").open()):
            sid = row["submission"]
            entry = merged.setdefault(sid, {"rows": [], "results": {"tests": []}})
            entry["rows"].append(row)
            entry["results"]["tests"] += json.loads((out / sid / "results.json").read_text())["tests"]
    return merged


def _part_scores(entry: dict) -> dict[str, tuple[float, float]]:
    scores: dict[str, list[float]] = {}
    for test in entry["results"]["tests"]:
        part = test["name"].split("/")[0]
        got, most = scores.setdefault(part, [0.0, 0.0])
        scores[part] = [got + test["score"], most + test["max_score"]]
    return {part: (got, most) for part, (got, most) in scores.items()}


def test_base_scores_full_marks(graded):
    scores = _part_scores(graded["base"])
    assert all(got == most for got, most in scores.values()), scores
    assert set(scores) == set(PARTS)


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_variant(graded, variant):
    header = _header(variant)
    if header.get("needs") == "cuda" and not torch.cuda.is_available():
        pytest.skip("this mistake shows only on a GPU")
    entry = graded[f"{variant.parent.name}__{variant.stem}"]
    scores = _part_scores(entry)
    own = header["part"]
    for part, (got, most) in scores.items():
        if part != own or variant.parent.name == "valid":
            assert got == most, f"{part}: {got}/{most}\n" + _failures(entry, part)
    if variant.parent.name == "buggy":
        got, most = scores[own]
        assert got < most, f"{variant.stem} lost no points in {own}"
        assert header["hint"] in _failures(entry, own), f"hint {header['hint']!r} missing from:\n" + _failures(entry, own)


def _failures(entry: dict, part: str) -> str:
    return "\n".join(t["output"] for t in entry["results"]["tests"] if t["name"].startswith(part + "/") and t["status"] == "failed")


def test_all_stubs_score_zero_with_plain_messages(graded):
    entry = graded["all_stubs"]
    assert all(got == 0 for got, _ in _part_scores(entry).values())
    outputs = [t["output"] for t in entry["results"]["tests"]]
    assert not any("Internal grader error" in o for o in outputs)
    assert sum("not implemented yet" in o for o in outputs) >= len(outputs) // 2


def test_one_part_done_scores_that_part_alone(graded):
    scores = _part_scores(graded["only_masks"])
    assert scores["masks"][0] == scores["masks"][1]
    assert all(got == 0 for part, (got, _) in scores.items() if part != "masks")
