"""Submissions for the similarity tests and benchmark, built from the corpus and the answer keys.

- `variant(patch)`: tests/corpus/base.py then a valid or buggy patch, as one module (as
  test_grader_corpus.py builds them): a .py submission.
- `key_cells()`, `key_notebook()`: the answer key solutions/attention/attention.ipynb, a notebook
  written independently of base.py; `notebook_with(cells)`: the release notebook with these answer
  cells (grade id -> code).
- `disguised(code, seed)`: what a student who copies does to hide it: every name the code binds
  renamed, comments and docstrings rewritten, and (in a module) the top-level definitions shuffled;
  `disguised_cells` does it to answer cells.
- `sources()`: every independent implementation of each name that base.py, the answer key and the
  valid patches hold; `vary` adds an argument check now and then; `write_class` makes a class of
  students from them, and copies of some of them.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import random
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "corpus"
KEY = ROOT / "solutions" / "attention"
RELEASE = ROOT / "release" / "attention"

WORDS = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "theta", "kappa", "lam", "mu", "nu", "xi", "rho",
         "sigma", "tau", "phi", "chi", "psi", "omega", "acc", "buf", "tmp", "val", "res", "out2", "aux", "w8"]
COMMENTS = ["# compute it step by step", "# see the lecture notes", "# careful with shapes here",
            "# TODO tidy up", "# this took me a while", "# works on the examples", "# broadcast over the batch"]


def patches(kind: str = "valid") -> list[Path]:
    return sorted((CORPUS / kind).glob("*.py"))


def patch_part(patch: Path) -> str:
    for line in patch.read_text().splitlines():
        if line.startswith("# part:"):
            return line.partition(":")[2].strip()
    raise ValueError(f"{patch} names no part")


def variant(patch: Path | None = None, base: str | None = None) -> str:
    """base.py, then the patch, as one module (a patch's `from __future__` imports moved to the top)."""
    base = (CORPUS / "base.py").read_text() if base is None else base
    if patch is None:
        return base
    text = patch.read_text()
    futures = [line for line in text.splitlines() if line.startswith("from __future__ import")]
    rest = "\n".join(line for line in text.splitlines() if line not in futures)
    return "\n".join(futures + [base, "", rest])


def key_cells() -> dict[str, str]:
    """The answer key's answer cells: grade id -> code."""
    return _answer_cells(json.loads((KEY / "attention.ipynb").read_text(encoding="utf-8")))


def _answer_cells(notebook: dict) -> dict[str, str]:
    found = {}
    for cell in notebook["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") == "code" and meta.get("solution") and not meta.get("grade"):
            source = cell["source"]
            found[meta["grade_id"]] = "".join(source) if isinstance(source, list) else source
    return found


def notebook_with(cells: dict[str, str]) -> str:
    """The release's attention notebook, its answer cells replaced by `cells` (grade id -> code)."""
    notebook = json.loads((RELEASE / "attention.ipynb").read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in cells:
            cell["source"] = cells[grade_id]
    return json.dumps(notebook)


def key_notebook() -> str:
    return (KEY / "attention.ipynb").read_text(encoding="utf-8")


# ---------------------------------------------------------------- what a copier does


def _local_names(tree: ast.AST) -> set[str]:
    """Names the code binds itself: parameters, assigned names, loop and with targets."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
    return found - {"self", "cls"}


def rename(code: str, rng: random.Random, keep: frozenset[str] = frozenset()) -> str:
    """Every name the code binds itself (but `keep`, the assignment's names) renamed consistently."""
    tree = ast.parse(code)
    names = sorted(_local_names(tree) - keep - set(dir(builtins)) - set(keyword.kwlist))
    fresh = {name: f"{rng.choice(WORDS)}_{k}" for k, name in enumerate(names)}
    out, previous = [], None
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.NAME and tok.string in fresh and not (previous and previous.string == "."):
            tok = tok._replace(string=fresh[tok.string])
        out.append(tok)
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous = tok
    return tokenize.untokenize(out)


def recomment(code: str, rng: random.Random) -> str:
    """Comments replaced or added, docstrings rewritten."""
    lines = []
    for line in code.splitlines():
        stripped = line.lstrip()
        indent = line[:len(line) - len(stripped)]
        if stripped.startswith("#"):
            line = indent + rng.choice(COMMENTS)
        elif stripped and rng.random() < 0.15 and not stripped.startswith(("def ", "class ", "@", ")", "]")):
            lines.append(indent + rng.choice(COMMENTS))
        lines.append(line)
    text = "\n".join(lines) + "\n"
    return text.replace('"""', '"""My own words: ', 1) if '"""' in text else text


def shuffle_definitions(code: str, rng: random.Random) -> str:
    """The module's top-level definitions in another order (imports first)."""
    tree = ast.parse(code)
    lines = code.splitlines()
    head, blocks = [], []
    for node in tree.body:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        text = "\n".join(lines[start - 1:node.end_lineno])
        (head if isinstance(node, (ast.Import, ast.ImportFrom)) else blocks).append(text)
    rng.shuffle(blocks)
    return "\n\n\n".join(["\n".join(head)] + blocks) + "\n"


def disguised(code: str, seed: int, keep: frozenset[str] = frozenset(), shuffle: bool = True) -> str:
    """A copy as a student hides it: names renamed, comments rewritten, definitions reordered."""
    rng = random.Random(seed)
    text = rename(code, rng, keep)
    if shuffle:
        text = shuffle_definitions(text, rng)
    return recomment(text, rng)


def disguised_cells(cells: dict[str, str], seed: int, keep: frozenset[str]) -> dict[str, str]:
    rng = random.Random(seed)
    return {gid: recomment(rename(code, rng, keep), rng) for gid, code in cells.items()}


def assignment_names() -> frozenset[str]:
    import sys

    sys.path.insert(0, str(ROOT))
    from autograder import assignment

    return frozenset(name for p in assignment.PARTS for name in p.names)


# ---------------------------------------------------------------- a class

HEADER = ("import math\nimport statistics\nimport time\n\nimport torch\nimport torch.nn.functional as F\n"
          "from torch import nn\n")


def definitions(code: str, names: frozenset[str]) -> dict[str, str]:
    """Each of `names` the module defines (its last definition), with the module's top-level helpers it
    uses, as code: name -> text."""
    tree = ast.parse(code)
    lines = code.splitlines()
    defined = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign)):
            for name in ([node.name] if not isinstance(node, ast.Assign) else
                         [t.id for t in node.targets if isinstance(t, ast.Name)]):
                defined[name] = node
    found = {}
    for name in names & set(defined):
        todo, seen = [defined[name]], []
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.append(node)
            used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
            todo += [defined[n] for n in used if n in defined and n not in names]
        seen.sort(key=lambda n: n.lineno)
        found[name] = "\n\n\n".join(
            "\n".join(lines[min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]) - 1:n.end_lineno])
            for n in seen)
    return found


def sources() -> dict[str, list[str]]:
    """Every independent implementation of each name the corpus and the answer key hold: base.py's, the
    answer key's and each valid patch's own."""
    names = assignment_names()
    found: dict[str, list[str]] = {}
    modules = [(CORPUS / "base.py").read_text(), "\n\n".join(key_cells().values())]
    modules += [HEADER + patch.read_text() for patch in patches("valid")]
    for module in modules:
        for name, text in definitions(module, names).items():
            if text not in found.setdefault(name, []):
                found[name].append(text)
    return found


CHECKS = ["if {p} is None:\n        raise ValueError(\"{p} must be given\")",
          "assert {p} is not None, \"{p} is required\"",
          "if isinstance({p}, (list, tuple)):\n        {p} = torch.as_tensor({p})"]


def vary(text: str, rng: random.Random) -> str:
    """What makes two students' code differ beyond the approach they chose: a check of an argument at the
    top of a function, now and then."""
    out = []
    for line in text.splitlines():
        out.append(line)
        if line.startswith("def ") and line.rstrip().endswith(":") and rng.random() < 0.4:
            params = [a.split("=")[0].split(":")[0].strip(" *") for a in line[line.index("(") + 1:].split(",")]
            params = [p for p in params if p.isidentifier() and p not in ("self", "fn")]
            if params:
                out.append("    " + rng.choice(CHECKS).format(p=rng.choice(params)))
    return "\n".join(out)


def write_class(folder: Path, students: int, seed: int = 0, copies: int = 0) -> list[Path]:
    """`students` submissions in `folder`, one file each. Each independent student takes, for every name
    of the assignment, one of its independent implementations (`sources`), varies it (`vary`) and
    disguises it: a quarter as notebooks, the rest as .py modules. `copies` of them are then copied by
    another student (disguised again: renamed, recommented, reordered)."""
    rng = random.Random(seed)
    names = assignment_names()
    found = sources()
    import sys

    sys.path.insert(0, str(ROOT))
    from autograder import assignment

    folder.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    for k in range(students - copies):
        chosen = {(p.name, name): vary(rng.choice(found[name]), rng)
                  for p in assignment.PARTS for name in p.names if name in found}
        if k % 4 == 3:
            path = folder / f"student{k:03d}.ipynb"
            cells = {f"{part}-{name}": text for (part, name), text in chosen.items()}
            path.write_text(notebook_with(disguised_cells(cells, seed * 1000 + k, names)))
        else:
            path = folder / f"student{k:03d}.py"
            path.write_text(disguised(HEADER + "\n\n" + "\n\n\n".join(chosen.values()) + "\n", seed * 1000 + k,
                                      names))
        made.append(path)
    for c in range(copies):
        source = made[rng.randrange(len(made))]
        path = folder / f"copy{c:03d}_of_{source.stem}{source.suffix}"
        if source.suffix == ".py":
            path.write_text(disguised(source.read_text(), seed * 7919 + c, names))
        else:
            notebook = json.loads(source.read_text())
            path.write_text(notebook_with(disguised_cells(_answer_cells(notebook), seed * 7919 + c, names)))
        made.append(path)
    return made
