"""`make demo`: grade a small sample class through the command line, as an instructor would.

The class is built from the validation corpus: a full-marks student, one who
has written nothing yet, one with only the masks done, and several common
mistakes; then `python -m autograder grade` grades it and prints the table.
"""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

from .cli import main as grade_main

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
MISTAKES = ("masks_fill_zero", "masks_transposed_tril_T", "scaling_no_scale", "heads_qkv_order_kqv",
            "positions_sin_cos_swapped", "timing_mean", "scaling_softmax_dim_minus2", "heads_no_output_projection")


def stubbed(source: str, keep: frozenset[str] = frozenset()) -> str:
    """`source` with every function body outside `keep` replaced by `raise NotImplementedError`."""
    tree = ast.parse(source)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name not in keep:
            for fn in [node] if isinstance(node, ast.FunctionDef) else [n for n in node.body if isinstance(n, ast.FunctionDef)]:
                fn.body = [ast.Raise(exc=ast.Name("NotImplementedError", ast.Load()))]
    return ast.unparse(ast.fix_missing_locations(tree))


def build_class(folder: Path) -> list[Path]:
    """One .py submission per simulated student."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    base = (CORPUS / "base.py").read_text()
    students = {"full_marks": base, "untouched_stubs": stubbed(base),
                "masks_only": stubbed(base, frozenset({"causal_average", "causal_mask", "padding_mask", "apply_mask", "combine_masks"})),
                "syntax_error": base + "\ndef broken(:\n"}
    students.update({name: base + "\n\n" + (CORPUS / "buggy" / f"{name}.py").read_text() for name in MISTAKES})
    for name, code in students.items():
        (folder / f"{name}.py").write_text(code)
    return sorted(folder.glob("*.py"))


def main() -> int:
    work = ROOT / ".demo"
    paths = build_class(work / "class")
    print(f"Grading a sample class of {len(paths)} students from {work / 'class'} ...")
    return grade_main(["grade", *map(str, paths), "--out", str(work / "reports"), "--secret", "demo",
                       "--parts", "masks,scaling,heads,positions,timing", "--force"])


if __name__ == "__main__":
    sys.exit(main())
