"""The assignment's facts, once: its parts and the names each defines, the notebook that holds
each part, the public helpers, the cell ids, and where the files a grader needs are found.

Adding a part means adding it here, writing its answer cells and grade cell in the notebook,
its reference module `attention_ref/<part>.py` and its grader module
`autograder/graders/test_<part>.py`. Nothing else lists the parts.

This module imports nothing of the reference or the graders: the sandbox side must never hold them.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ASSIGNMENT = "attention"
PUBLIC_HELPERS = ("selfcheck.py", "quizcheck.py")  # ship with the release; the setup cells import them
SETUP_CELL_PREFIX = "setup"  # read-only cells of the notebooks that run when grading, e.g. "setup"
GRADE_CELL_PREFIX = "grade-"  # the grade cell of part P is "grade-P"


@dataclass(frozen=True)
class Part:
    """One graded part: its id, the notebook its answer cells are in, and the names it defines."""

    name: str
    notebook: str
    names: tuple[str, ...] = ()  # injected from the reference when another part is graded

    @property
    def grade_cell(self) -> str:
        return GRADE_CELL_PREFIX + self.name

    @property
    def grader_module(self) -> str:
        return f"test_{self.name}.py"


PARTS: tuple[Part, ...] = (
    Part("masks", "attention", ("causal_average", "causal_mask", "padding_mask", "apply_mask", "combine_masks")),
    Part("scaling", "attention", ("attention_scores", "attention_weights", "scaled_dot_product_attention",
                                  "dot_product_spread", "softmax_entropy")),
    Part("heads", "attention", ("split_heads", "merge_heads", "CausalSelfAttention")),
    Part("positions", "attention", ("sinusoidal_encoding", "position_similarity", "add_positions",
                                    "is_permutation_equivariant")),
    Part("timing", "attention", ("score_grid_bytes", "time_call", "time_attention", "fit_power_law")),
    Part("tiles", "attention", ("block_state", "merge_states", "tiled_attention", "tiled_score_bytes")),
    Part("quiz", "quiz"),
)
PART_NAMES: tuple[str, ...] = tuple(p.name for p in PARTS)
NOTEBOOKS: tuple[str, ...] = tuple(dict.fromkeys(p.notebook for p in PARTS))
REFERENCE_PACKAGE = "attention_ref"  # one module per part that defines names: attention_ref/<part>.py
QUIZ_KEY_MODULE = "autograder.graders.quiz_key"


def part(name: str) -> Part:
    """The part called `name`; ValueError names the parts when there is none."""
    for p in PARTS:
        if p.name == name:
            return p
    raise ValueError(f"unknown part {name!r}; the parts are {', '.join(PART_NAMES)}")


def nbgrader_metadata(cell: Any) -> dict:
    """A notebook cell's nbgrader metadata ({} when none), from a plain dict or an nbformat node."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    found = meta.get("nbgrader") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def is_answer_cell(cell: Any) -> bool:
    """An autograded answer cell: in nbgrader's terms a solution cell that is not also a grade cell.
    (nbgrader.utils says the same, but importing nbgrader costs a grading worker seconds.)"""
    meta = nbgrader_metadata(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("solution")) and not meta.get("grade")


def is_grade_cell(cell: Any) -> bool:
    """A grade cell that holds tests (not a manually graded answer)."""
    meta = nbgrader_metadata(cell)
    return cell.get("cell_type") == "code" and bool(meta.get("grade")) and not meta.get("solution")


def parse_parts(text: str) -> tuple[str, ...]:
    """`masks,heads` as part names in assignment order; ValueError for an unknown one."""
    wanted = {name.strip() for name in text.split(",") if name.strip()}
    for name in wanted:
        part(name)
    return tuple(name for name in PART_NAMES if name in wanted)


# ---------------------------------------------------------------- where things are

PACKAGE_DIR = Path(__file__).resolve().parent
GRADERS_DIR = PACKAGE_DIR / "graders"
# The project checkout this package runs from, if it does (tools and tests use it); None when installed.
CHECKOUT_ROOT: Path | None = (PACKAGE_DIR.parent if (PACKAGE_DIR.parent / "assignments" / ASSIGNMENT).is_dir()
                              and (PACKAGE_DIR.parent / "pyproject.toml").is_file() else None)


def _package_folder(name: str) -> Path | None:
    """Where package `name` would be imported from, without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def release_folder() -> Path:
    """The student release: notebooks (setup cells and answer-cell ids, no solutions) and the
    public helpers. Installed as the package data `autograder.release_files`; in a checkout
    without an install, `release/<assignment>/`."""
    installed = _package_folder("autograder.release_files")
    if installed is not None and (installed / f"{NOTEBOOKS[0]}.ipynb").is_file():
        return installed
    if CHECKOUT_ROOT is not None:
        return CHECKOUT_ROOT / "release" / ASSIGNMENT
    raise FileNotFoundError("the assignment's release files are not installed (autograder.release_files)")


def reference_folder() -> Path:
    """The reference package's folder (its part modules are injected into submissions)."""
    folder = _package_folder(REFERENCE_PACKAGE)
    if folder is None:
        raise FileNotFoundError(f"the reference package {REFERENCE_PACKAGE} is not installed")
    return folder


def reference_source(part_name: str) -> str:
    return (reference_folder() / f"{part_name}.py").read_text(encoding="utf-8")
