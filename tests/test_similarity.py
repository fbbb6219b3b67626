"""Submissions unusually alike (autograder/reports/similarity.py), on real submissions: the corpus
(tests/corpus/base.py, its valid patches) and the answer key (solutions/attention/), copied and
disguised as students disguise copies (tests/similarity_corpus.py); then the class report's section,
through the grader's command line."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import similarity_corpus as sc
from autograder.model.submission import read_submission
from autograder.reports import CLASS_REPORT_FILE, classreport, find_similar_or_why, similarity, write_class
from autograder.reports.similarity import DEFAULT_THRESHOLD, NOTE, find_similar

pytestmark = pytest.mark.slow  # copydetect over the corpus in fresh processes, and a run of `python -m autograder`

NAMES = sc.assignment_names()
CODE_PARTS = similarity.code_parts()


def _read(folder: Path, **files: str) -> dict[str, dict]:
    """Each name=text as a submission file (`name.py`, or `name.ipynb` when the text is a notebook), read
    as grading reads it: id -> its cells."""
    folder.mkdir(parents=True, exist_ok=True)
    cells = {}
    for name, text in files.items():
        path = folder / f"{name}{'.ipynb' if text.lstrip().startswith('{') else '.py'}"
        path.write_text(text, encoding="utf-8")
        cells[name] = read_submission(path, name).cells
    return cells


def _pairs(found) -> dict[frozenset, similarity.Pair]:
    return {frozenset((p.a, p.b)): p for p in found.pairs}


def _module(cells: dict[str, str]) -> str:
    """Answer cells pasted into one .py module, as a student who works outside the notebook does."""
    return sc.HEADER + "\n\n" + "\n\n\n".join(cells.values()) + "\n"


# ---------------------------------------------------------------- copies are found


def test_disguised_copies_are_found_in_every_part(tmp_path):
    base, key = sc.variant(), sc.key_cells()
    copied_module = sc.disguised(base, seed=1, keep=NAMES)  # names renamed, comments rewritten, helpers reordered
    copied_cells = sc.disguised_cells(key, seed=2, keep=NAMES)
    assert copied_module != base and "scores = " in base and "scores = " not in copied_module
    order = [line for line in copied_module.splitlines() if line.startswith(("def ", "class "))]
    assert order != [line for line in base.splitlines() if line.startswith(("def ", "class "))]
    cells = _read(tmp_path, alice=base, bob=copied_module, carol=sc.key_notebook(),
                  dave=sc.notebook_with(copied_cells), erin=sc.disguised(_module(key), seed=3, keep=NAMES))
    pairs = _pairs(find_similar(cells))
    for a, b in (("alice", "bob"), ("carol", "dave"), ("carol", "erin"), ("dave", "erin")):
        pair = pairs[frozenset((a, b))]
        assert set(pair.alike) == set(CODE_PARTS), (a, b, pair.alike)
        assert all(pair.parts[p].score > 0.9 for p in CODE_PARTS), (a, b, {p: m.score for p, m in pair.parts.items()})
    assert frozenset(("alice", "carol")) not in pairs  # base.py and the answer key were written apart


def test_a_copy_with_lines_added_is_still_found(tmp_path):
    base = sc.variant()
    edited = sc.vary(sc.disguised(base, seed=4, keep=NAMES), random.Random(4))
    edited = "\n".join(line + ("\n    assert True" if line.startswith("    return ") and k % 3 == 0 else "")
                       for k, line in enumerate(edited.splitlines()))
    cells = _read(tmp_path, alice=base, bob=edited)
    pair = _pairs(find_similar(cells))[frozenset(("alice", "bob"))]
    assert len(pair.alike) >= len(CODE_PARTS) - 1, {p: round(m.score, 2) for p, m in pair.parts.items()}


# ---------------------------------------------------------------- honest work is not


def test_independent_solutions_of_the_same_stubs_are_not_flagged(tmp_path):
    """base.py, the answer key and every valid corpus patch (each alone, as the student who wrote that
    version of those functions): written apart, none is unusually alike to another."""
    files = {"base": sc.variant(), "key": sc.key_notebook()}
    files.update({patch.stem: sc.HEADER + patch.read_text() for patch in sc.patches("valid")})
    found = find_similar(_read(tmp_path, **files))
    assert found.submissions == len(files)
    assert found.pairs == [], [(p.a, p.b, p.alike, round(p.score, 2)) for p in found.pairs]


def test_the_releases_own_text_never_counts(tmp_path):
    release = (sc.RELEASE / "attention.ipynb").read_text()
    for part, pieces in similarity.part_code(_read(tmp_path / "r", release=release)["release"]).items():
        assert all(similarity.fingerprint(piece).hashes == set() for piece in pieces), part  # all boilerplate
    # two students who submit the release untouched, and two who each fill one cell and leave the rest as
    # released (the same signatures, docstrings and stubs: much text in common), written apart
    key_cell = {"scaling-attention_scores": sc.key_cells()["scaling-attention_scores"]}
    own = {"scaling-attention_scores": "def attention_scores(q, k):\n    d = q.shape[-1]\n"
                                       "    return torch.einsum('...qd,...kd->...qk', q, k) / d ** 0.5\n"}
    cells = _read(tmp_path / "s", ann=release, ben=release, cid=sc.notebook_with(key_cell), dan=sc.notebook_with(own))
    found = find_similar(cells)
    assert found.pairs == [], [(p.a, p.b, p.alike) for p in found.pairs]
    texts = {sid: similarity.joined(similarity.part_code(c)["scaling"]) for sid, c in cells.items() if sid in ("cid", "dan")}
    assert all(text.count("NotImplementedError") >= 4 for text in texts.values())  # the other stubs are there


def _with_releases_docstrings(bodies: str) -> dict[str, str]:
    """The release's answer cells, each function's stub replaced by the body of the function of that name in
    `bodies` (its own docstring left out): the release's signatures and docstrings, someone else's code."""
    import ast
    import textwrap

    theirs = {n.name: n for n in ast.parse(bodies).body if isinstance(n, ast.FunctionDef)}
    lines = bodies.split("\n")
    cells = {}
    for grade_id, stub in sc._answer_cells(json.loads((sc.RELEASE / "attention.ipynb").read_text())).items():
        (node,) = ast.parse(stub).body
        if not isinstance(node, ast.FunctionDef) or node.name not in theirs:
            continue
        mine = theirs[node.name]
        first = mine.body[1] if isinstance(mine.body[0], ast.Expr) and isinstance(mine.body[0].value, ast.Constant) \
            else mine.body[0]
        body = textwrap.indent(textwrap.dedent("\n".join(lines[first.lineno - 1:mine.end_lineno])), "    ")
        cells[grade_id] = "\n".join(stub.split("\n")[:node.body[0].end_lineno]) + "\n" + body + "\n"
    return cells


def test_two_students_who_share_only_the_releases_docstrings_are_not_flagged(tmp_path):
    """The answer key and base.py's functions, each under the release's own signature and docstring: the
    docstrings (much text in common) make no pair."""
    cells = _with_releases_docstrings(sc.variant())
    assert len(cells) >= 20 and all('"""' in code for code in cells.values())
    found = find_similar(_read(tmp_path, key=sc.key_notebook(), other=sc.notebook_with(cells)))
    assert found.submissions == 2
    assert found.pairs == [], [(p.a, p.b, p.alike, round(p.score, 2)) for p in found.pairs]


def test_the_side_by_side_view_never_marks_the_releases_own_text(tmp_path):
    """A copy is marked where its code matches, not over the release's docstrings, comments and signatures
    beside that code (a k-gram across both carried the mark over them: a docstring is one character of
    copydetect's filtered code)."""
    rng = random.Random(5)  # names renamed; the docstrings kept as released (a recommented one is the copier's)
    copied = {grade_id: sc.rename(code, rng, NAMES) for grade_id, code in sc.key_cells().items()}
    found = find_similar(_read(tmp_path, ann=sc.key_notebook(), bob=sc.notebook_with(copied)))
    (pair,) = found.pairs
    assert set(pair.alike) == set(CODE_PARTS)
    from pygments.lexers import PythonLexer
    from pygments.token import String

    docstrings = [value for text in similarity.release_text() for _, kind, value in
                  PythonLexer().get_tokens_unprocessed(text) if kind in String.Doc and len(value) > 40]
    assert len(docstrings) >= 20
    marked_any = 0
    for part in pair.alike:
        for side, spans in zip((pair.a, pair.b), pair.views[part].spans):
            text = found.texts[side][part]
            marked_any += sum(b - a for a, b in spans)
            for docstring in docstrings:  # no part of a release docstring is marked
                at = text.find(docstring)
                while at >= 0:
                    assert not any(a < at + len(docstring) and at < b for a, b in spans), (side, part, docstring[:60])
                    at = text.find(docstring, at + 1)
    assert marked_any > 2000  # the code itself is marked
    page = found.html()
    assert "Args:" in page and not re.search(r"<mark>[^<]*(Args:|Returns:|YOUR CODE HERE)", page)


def test_the_scores_are_copydetects(tmp_path):
    """The numbers computed for all pairs at once are compare_files' own: each piece of one side (an
    answer cell, a top-level definition) against the other side's fingerprints."""
    import copy

    from copydetect import compare_files

    files = {"base": sc.variant(), "key": sc.key_notebook(), "copy": sc.disguised(sc.variant(), seed=5, keep=NAMES)}
    files.update({p.stem: sc.variant(p) for p in sc.patches("valid")[::6]})
    texts = {sid: similarity.part_code(c) for sid, c in _read(tmp_path, **files).items()}

    def whole(pieces):  # one fingerprint holding every piece's
        union = copy.copy(pieces[0])
        union.hashes = set().union(*(f.hashes for f in pieces))
        union.hash_idx = {h: ps for f in pieces for h, ps in f.hash_idx.items()}
        union.token_coverage = max(1, sum(f.token_coverage for f in pieces))
        return union

    for part in CODE_PARTS:
        docs = [[similarity.fingerprint(piece) for piece in t[part]] for t in texts.values()]
        matched, coverage = similarity._matches(docs, similarity.NOISE_CHARS)
        for i, doc in enumerate(docs):
            assert coverage[i] == sum(f.token_coverage for f in doc)
            for j, other in enumerate(docs):
                if i != j:
                    assert matched[i, j] == sum(compare_files(f, whole(other))[0] for f in doc), (part, i, j)


def test_the_same_scores_in_every_process(tmp_path):
    """Python salts its string hash per process; copydetect hashes with it, and every k-gram is a
    fingerprint, so the scores do not depend on the salt."""
    folder = tmp_path / "subs"
    _read(folder, alice=sc.variant(), bob=sc.disguised(sc.variant(), seed=6, keep=NAMES), carol=sc.key_notebook())
    code = ("import json, sys; from pathlib import Path; from autograder.model.submission import read_submission; "
            "from autograder.reports.similarity import find_similar\n"
            "cells = {p.stem: read_submission(p, p.stem).cells for p in sorted(Path(sys.argv[1]).iterdir())}\n"
            "found = find_similar(cells, threshold=0.3, min_matched=1)\n"
            "print(json.dumps(sorted([p.a, p.b, k, m.matched, m.coverage] for p in found.pairs for k, m in p.parts.items())))")
    runs = [subprocess.run([sys.executable, "-c", code, str(folder)], capture_output=True, text=True, check=True,
                           cwd=sc.ROOT, env={**os.environ, "PYTHONHASHSEED": seed}).stdout for seed in ("1", "2")]
    assert runs[0] == runs[1] and len(json.loads(runs[0])) >= len(CODE_PARTS)


# ---------------------------------------------------------------- a .py submission, per part


def test_a_module_is_compared_per_part_by_its_definitions():
    code = ("import torch\nLIMIT = -1e9\n\ndef _fill(x, m):\n    return x.masked_fill(~m, LIMIT)\n\n"
            "def apply_mask(scores, mask):\n    return scores * 0\n\n"
            "def attention_weights(scores, mask=None):\n    return torch.softmax(_fill(scores, mask), -1)\n\n"
            "def apply_mask(scores, mask):\n    return _fill(scores, mask)\n\nprint('demo')\n")
    parts = similarity.split_module(code, "mine.py")
    assert set(parts) == {"masks", "scaling"}
    assert parts["masks"] == ["# mine.py, lines 2-2\nLIMIT = -1e9", "# mine.py, lines 4-5\ndef _fill(x, m):\n"
                              "    return x.masked_fill(~m, LIMIT)", "# mine.py, lines 13-14\ndef apply_mask(scores, "
                              "mask):\n    return _fill(scores, mask)"]  # the last apply_mask, its helpers, in order
    assert parts["scaling"] == ["# mine.py, lines 10-11\ndef attention_weights(scores, mask=None):\n"
                                "    return torch.softmax(_fill(scores, mask), -1)"]  # _fill went to the first part
    assert similarity.split_module("def broken(:\n", "x.py") == {similarity.MODULE_PART: ["# x.py\ndef broken(:\n"]}


# ---------------------------------------------------------------- the class report


def _graded(ids) -> list:
    from autograder.model.results import GradedSubmission

    return [GradedSubmission(sid) for sid in ids]


def test_the_section_says_none_or_is_absent(tmp_path):
    cells = _read(tmp_path / "subs", base=sc.variant(), key=sc.key_notebook())
    write_class(_graded(cells), tmp_path / "on", similar=find_similar_or_why(cells))
    page = (tmp_path / "on" / CLASS_REPORT_FILE).read_text()
    assert "id='similar'" in page and "id='similar-none'" in page and NOTE in page and "similar-pair" not in page
    write_class(_graded(cells), tmp_path / "off", similar=None)
    page = (tmp_path / "off" / CLASS_REPORT_FILE).read_text()
    assert "id='similar'" not in page and "#similar" not in page and ".sbs" not in page
    assert "id='similar'" not in classreport.class_report_html(_graded(cells))


def test_the_page_shows_the_students_code_escaped(tmp_path):
    body = ('    """</pre><script>alert(1)</script>"""\n    d = q.shape[-1]\n    s = q @ k.transpose(-2, -1)\n'
            '    s = s / math.sqrt(d)\n    # <img src=x onerror=alert(2)>\n    return s\n')
    module = sc.variant().replace('def attention_scores(q, k):\n    d = q.shape[-1]\n'
                                  '    return q @ k.transpose(-2, -1) / math.sqrt(d)\n',
                                  "def attention_scores(q, k):\n" + body)
    cells = _read(tmp_path / "subs", **{"<b>&amp;": module, "x'y": sc.disguised(module, seed=8, keep=NAMES)})
    found = find_similar(cells)
    page = classreport.class_report_html(_graded(cells), similar=found)
    section = page[page.index("<h2 id='similar'>"):]
    assert "<script" not in page and "<img" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in section
    assert "&lt;b&gt;&amp;amp;" in section and "x&#x27;y" in section and "<b>&amp;" not in section
    assert not re.search(r"<[a-z]+\s[^>]*(src|href)=['\"]?(https?:|//)", page) and "<mark>" in section  # nothing fetched


def test_the_class_report_of_a_run(tmp_path):
    """Graded through the command line (one part, to be quick): the section names the copied pair, its
    scores and its matching regions side by side, and not the honest pairs; a later run that keeps
    every result compares them again; `--no-similarity` leaves the section out."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    _read(subs, alice=sc.variant(), bob=sc.disguised(sc.variant(), seed=9, keep=NAMES), carol=sc.key_notebook(),
          dave=sc.HEADER + (sc.CORPUS / "valid" / "masks_arange_comparisons.py").read_text())

    def grade(*options: str) -> str:
        run = subprocess.run([sys.executable, "-m", "autograder", "grade", *map(str, sorted(subs.iterdir())),
                              "--out", str(out), "--secret", "similar", "--parts", "masks", "--quiet", *options],
                             capture_output=True, text=True, timeout=600, cwd=sc.ROOT)
        assert run.returncode == 0, run.stderr[-3000:]
        return (out / CLASS_REPORT_FILE).read_text()

    page = grade("--similarity-threshold", "0.8")
    section = page[page.index("<h2 id='similar'>"):page.index("<h2 id='time'>")]
    assert NOTE in section and "0.8" not in NOTE and "at least 80%" in section
    rows = [line for line in section.split("<tr class='similar-pair'")[1:]]
    assert len(rows) == 1 and rows[0].startswith(" data-a='alice' data-b='bob' data-score='1.000'"), rows
    assert "<td class='n alike' data-part='masks' data-score='1.000'" in rows[0]
    view = section[section.index("<details id='pair-1'"):]
    assert view.count("<div class='sbs'") == len(CODE_PARTS) and "<mark>" in view and "<pre>" in view
    assert "return ones / ones.sum(dim=-1, keepdim=True)" in view.replace("<mark>", "").replace("</mark>", "")
    grades = (out / "grades.csv").read_text()
    assert grades.count("graded") >= 4 and "alike" not in grades  # no score changes, no word in the grades

    page = grade()  # nothing to grade again: every result is kept, and every submission compared again
    assert "class='similar-pair' data-a='alice' data-b='bob'" in page and "at least 75%" in page
    page = grade("--no-similarity")
    assert "id='similar'" not in page and "Unusually alike" not in page


def test_the_threshold_option():
    from autograder.cli import _parser

    args = _parser().parse_args(["grade", "x.py", "--out", "o"])
    assert args.similarity_threshold == DEFAULT_THRESHOLD and not args.no_similarity
    assert _parser().parse_args(["grade", "x.py", "--out", "o", "--similarity-threshold", "0.5"]).similarity_threshold == 0.5
    for bad in ("0", "1.5", "many", "nan"):
        with pytest.raises(SystemExit) as exc:
            _parser().parse_args(["grade", "x.py", "--out", "o", "--similarity-threshold", bad])
        assert exc.value.code == 2
