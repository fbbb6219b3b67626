"""The graders proven on known submissions, through the command line a course would use.

Every valid variant must score full marks; every buggy one must lose points in
its own part only, and every check it fails there must name one and the same
likely mistake, its catalogue hint (the `hint` of each failed check's result is
exactly the text of the variant's `# hint:` key, autograder/hints.py); an all-stubs submission scores
0 everywhere without a grader error; a submission with one part done gets full
marks on that part alone.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograder.hints import hint
from tools.demo import stubbed

pytestmark = pytest.mark.slow  # three runs of `python -m autograder grade` over the whole corpus

CORPUS = Path(__file__).parent / "corpus"
PARTS = ("masks", "scaling", "heads", "positions", "timing", "tiles")


def _header(path: Path) -> dict[str, str]:
    """A variant's header fields; its `hint`, a key of the catalogue (autograder/hints.py), as the text a
    failed check gives."""
    fields = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(":")
        fields[key.strip()] = value.strip()
    if "hint" in fields:
        fields["hint"] = hint(fields["hint"])
    return fields


VARIANTS = sorted((CORPUS / "valid").glob("*.py")) + sorted((CORPUS / "buggy").glob("*.py"))


def variant_module(base: str, patch: str) -> str:
    """base.py, then the patch, as one module; a patch's `from __future__` imports move to the top,
    the only place Python allows them."""
    futures = [line for line in patch.splitlines() if line.startswith("from __future__ import")]
    rest = "\n".join(line for line in patch.splitlines() if line not in futures)
    return "\n".join(futures + [base, "", rest])


VALUE_PARTS = ("masks", "scaling", "heads", "positions")
OTHER_IDS = ("as_another_student", "as_a_third_student")  # each buggy variant is graded under these ids too
# Graded only where they tell something (the timing part's checks wait on the clock, the tiles part's compute at
# a large T): on base.py, the stubs, the one-part submission and the part's own variants. Another part's variant
# cannot change them: when a part is graded, the reference stands in for every other part's names.
COSTLY_PARTS = ("timing", "tiles")


@pytest.fixture(scope="session")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Grade the whole corpus through the grader's command line: every submission on the value parts,
    and base.py, the stubs and each costly part's own variants on that part."""
    folder = tmp_path_factory.mktemp("corpus")
    base = (CORPUS / "base.py").read_text()
    (folder / "base.py").write_text(base)
    for variant in VARIANTS:
        text = variant_module(base, variant.read_text())
        (folder / f"{variant.parent.name}__{variant.stem}.py").write_text(text)
        if variant.parent.name == "buggy":  # under other ids: other inputs, drawn per student
            for again in OTHER_IDS:
                (folder / f"{variant.parent.name}__{variant.stem}__{again}.py").write_text(text)
    (folder / "all_stubs.py").write_text(stubbed(base))
    masks_names = {"causal_average", "causal_mask", "padding_mask", "apply_mask", "combine_masks"}
    (folder / "only_masks.py").write_text(stubbed(base, keep=frozenset(masks_names)))
    everyone = sorted(map(str, folder.glob("*.py")))
    runs = [(everyone, VALUE_PARTS, folder / "out")]
    for part in COSTLY_PARTS:
        own = [p for p in everyone if f"__{part}_" in p or Path(p).stem in ("base", "all_stubs", "only_masks")]
        runs.append((own, (part,), folder / f"out-{part}"))
    merged: dict[str, dict] = {}
    for paths, parts, out in runs:
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
        named = _hints(entry, own)
        assert named == {header["hint"]}, (f"{variant.stem}: its failed {own} checks name {sorted(named)}, not just "
                                           f"{header['hint']!r}:\n" + _failures(entry, own))


def _failed(entry: dict, part: str) -> list[dict]:
    return [t for t in entry["results"]["tests"] if t["name"].startswith(part + "/") and t["status"] == "failed"]


def _failures(entry: dict, part: str) -> str:
    return "\n".join(t["output"] for t in _failed(entry, part))


def _hints(entry: dict, part: str) -> set[str]:
    """The distinct likely mistakes (CheckResult.hint, "" for none) of the part's failed checks."""
    return {(t.get("extra_data") or {}).get("hint", "") for t in _failed(entry, part)}


def test_one_likely_mistake_per_buggy_variant(graded, capsys):
    """The corpus at a glance: for each buggy variant, its score in its part, how many checks it fails and the
    likely mistakes they name (one, its header's, or the row is marked). Printed (run with -s to see it)."""
    rows, wrong = [], []
    for variant in sorted((CORPUS / "buggy").glob("*.py")):
        header = _header(variant)
        if header.get("needs") == "cuda" and not torch.cuda.is_available():
            continue
        entry = graded[f"buggy__{variant.stem}"]
        got, most = _part_scores(entry)[header["part"]]
        named = sorted(_hints(entry, header["part"]))
        ok = named == [header["hint"]]
        wrong += [] if ok else [variant.stem]
        rows.append(f"{'ok ' if ok else 'BAD'} {variant.stem:42} {got:>4g}/{most:<3g} "
                    f"{len(_failed(entry, header['part'])):>2} failed  {' | '.join(named) or '(none)'}")
    table = "\n".join(rows)
    with capsys.disabled():
        print(f"\n{len(rows)} buggy variants, the likely mistakes their failed checks name:\n{table}")
    assert not wrong, table


@pytest.mark.parametrize("variant", sorted((CORPUS / "buggy").glob("*.py")), ids=lambda p: p.stem)
def test_the_same_code_scores_the_same_for_every_student(graded, variant):
    """Per-student inputs never decide whether a mistake is caught: a buggy variant graded under other ids (so
    on other inputs, drawn per student) gets the same score on every check, and names the same mistakes."""
    first = graded[f"buggy__{variant.stem}"]
    scores = {t["name"]: t["score"] for t in first["results"]["tests"]}
    for again in OTHER_IDS:
        other = graded[f"buggy__{variant.stem}__{again}"]
        assert {t["name"]: t["score"] for t in other["results"]["tests"]} == scores, again
        part = _header(variant)["part"]
        assert _hints(other, part) == _hints(first, part), again


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
