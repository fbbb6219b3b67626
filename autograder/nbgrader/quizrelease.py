"""The quiz's release build: self-check or counted, options as written or shuffled per course.

`QuizRelease` is an nbgrader preprocessor that `nbgrader_config.py` puts first in nbgrader's
`generate_assignment` pipeline, so `make release` (which runs nbgrader) and a plain
`nbgrader generate_assignment attention` build the same release. Its two settings are the one
place the quiz's mode is set::

    c.QuizRelease.mode = "self-check"   # or "counted"
    c.QuizRelease.shuffle = False       # True: each course's own option order, from $AUTOGRADER_SECRET

For the quiz notebook it keeps the cells of the chosen mode (cells tagged `quiz-self-check` or
`quiz-counted` in the source are kept in that mode only), shows each question's options in the
course's order when `shuffle` is on (and re-letters the solution, for the answer keys), and records
`{"mode": ..., "options": "as written" | "shuffled"}` in the notebook's metadata `quiz`, which the
quiz grader reads from its copy of the release. For every notebook it writes the released
`quizcheck.py`: the source helper with its block of quiz data filled in from the hidden key
(autograder/graders/quiz_key.py): digests and explanations in a self-check quiz, in the course's
letters; in a counted one only the mode and the question ids, and `key_leaks` must find nothing.

The secret is read from the environment at build time, used to order the options and forgotten:
nothing written into the release holds it or anything computed from it but that order.

nbgrader imports this module whenever it reads its configuration: keep its imports light (the key
is imported when a notebook is built).
"""

from __future__ import annotations

import os
import re
import types
from pathlib import Path
from typing import Any, Mapping

from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Enum

from .. import quiz
from ..assignment import ASSIGNMENT, GRADE_CELL_PREFIX

SECRET_VARIABLE = "AUTOGRADER_SECRET"
HELPER = "quizcheck.py"
BEGIN, END = "# BEGIN QUIZ DATA", "# END QUIZ DATA"


class QuizRelease(NbGraderPreprocessor):
    """Builds the quiz notebook and the released quizcheck.py in the configured mode."""

    mode = Enum(list(quiz.MODES), default_value=quiz.DEFAULT_MODE,
                help="self-check: quizcheck.py says at once whether an answer is right (formative); counted: the "
                     "release holds no key material, the check cells record the answer and the quiz is marked "
                     "after the deadline.").tag(config=True)
    counts = Bool(None, allow_none=True,
                  help="Whether the grader counts the quiz's points in the total. None (the default): a counted quiz "
                       "counts, a self-check one is reported and left out (its release tells students the answers). "
                       "The grader's --quiz-counts / --no-quiz-counts overrides it.").tag(config=True)
    shuffle = Bool(False, help="Show each question's options in an order drawn from the course secret "
                               f"(${SECRET_VARIABLE}, which must then be set when the release is built and when "
                               "it is graded).").tag(config=True)

    def secret(self) -> str | None:
        """The course secret when the options are shuffled (None when they are not)."""
        if not self.shuffle:
            return None
        secret = os.environ.get(SECRET_VARIABLE, "")
        if not secret:
            raise ValueError(f"QuizRelease.shuffle is on but ${SECRET_VARIABLE} is not set: the options are "
                             "ordered by the course secret; set it to the secret you will grade with")
        return secret

    def preprocess(self, nb: Any, resources: dict) -> tuple[Any, dict]:
        from ..graders.quiz_key import ANSWERS

        info = resources.get("nbgrader") or {}
        if info.get("assignment") != ASSIGNMENT:  # a course's other assignments are not ours to build
            return nb, resources
        orders = quiz.option_orders(ANSWERS, self.secret())
        converter = _converter(self)
        if converter is not None:  # inside nbgrader: its copy of quizcheck.py becomes the built one
            assignment, student = info.get("assignment"), info.get("student")
            source = Path(converter._format_source(assignment, student)) / HELPER
            dest = Path(converter._format_dest(assignment, student)) / HELPER
            if source.is_file():
                text = built_quizcheck(source.read_text(encoding="utf-8"), self.mode, orders)
                if dest.exists():
                    dest.unlink()
                dest.write_text(text, encoding="utf-8")
        if info.get("notebook") == quiz.NOTEBOOK:
            nb = built_notebook(nb, self.mode, orders)
            if not quiz.counts_in_mode(self.mode, self.counts):
                nb = without_points(nb)
        return nb, resources


def without_points(nb: Any) -> Any:
    """The quiz notebook with its grade cell worth 0 points, so that nbgrader's gradebook (its totals,
    `nbgrader export`, the formgrader) leaves out a quiz the grader does not count; the cell still shows
    the quiz's checks."""
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == f"{GRADE_CELL_PREFIX}{quiz.PART}":
            cell.metadata.nbgrader["points"] = 0
    return nb


def _converter(preprocessor: Any) -> Any:
    """The nbgrader converter running `preprocessor` (its exporter's parent), or None outside nbgrader."""
    node = preprocessor.parent
    while node is not None:
        if hasattr(node, "_format_dest") and hasattr(node, "_format_source"):
            return node
        node = getattr(node, "parent", None)
    return None


def settings(course_root: Path) -> QuizRelease:
    """The QuizRelease that `course_root`'s nbgrader_config.py configures (for what runs outside nbgrader:
    the answer keys of `make release`, the tests)."""
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_root)).load_config()
    return QuizRelease(config=config)


# ---------------------------------------------------------------- the notebook


def built_notebook(nb: Any, mode: str, orders: Mapping[str, tuple[str, ...]]) -> Any:
    """The quiz notebook in `mode`, its options in `orders` (question id -> order), with its build record."""
    if mode not in quiz.MODES:
        raise ValueError(f"quiz mode {mode!r}: one of {', '.join(quiz.MODES)}")
    keep, drop = quiz.MODE_TAGS[mode], {t for m, t in quiz.MODE_TAGS.items() if m != mode}
    cells = []
    for cell in nb.cells:
        tags = list(cell.get("metadata", {}).get("tags", []))
        if drop & set(tags):
            continue
        if keep in tags:
            tags.remove(keep)
            if tags:
                cell.metadata["tags"] = tags
            else:
                del cell.metadata["tags"]
        cells.append(cell)
    nb.cells = cells
    seen = set()
    for cell in nb.cells:
        match = quiz.QUESTION_CELL.match(str(cell.get("id", "")))
        if cell.cell_type == "markdown" and match:
            seen.add(match.group(1))
            cell.source = quiz.shuffled_question(cell.source, orders[match.group(1)])
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type == "code" and grade_id.startswith("quiz-q"):
            question = grade_id.removeprefix("quiz-")
            cell.source = quiz.relettered_answer(cell.source, question, orders[question])
    if seen != set(orders):
        raise ValueError(f"the quiz notebook's questions ({', '.join(sorted(seen))}) are not the key's "
                         f"({', '.join(sorted(orders))}): autograder/graders/quiz_key.py and quiz.ipynb must agree")
    shuffled = any(order != quiz.OPTIONS for order in orders.values())
    nb.metadata[quiz.BUILD_METADATA] = {"mode": mode, "options": quiz.SHUFFLED if shuffled else quiz.AS_WRITTEN}
    return nb


# ---------------------------------------------------------------- quizcheck.py


def helper_module(text: str) -> types.ModuleType:
    """quizcheck.py's text as a module (its digest formula is the one the build must use)."""
    module = types.ModuleType("quizcheck_built")
    exec(compile(text, HELPER, "exec"), module.__dict__)  # our own public helper, never a submission
    return module


def built_quizcheck(source: str, mode: str, orders: Mapping[str, tuple[str, ...]]) -> str:
    """The released quizcheck.py: `source` with its block of quiz data for `mode`, in the letters of `orders`."""
    from ..graders.quiz_key import ANSWERS, EXPLANATIONS

    if mode not in quiz.MODES:
        raise ValueError(f"quiz mode {mode!r}: one of {', '.join(quiz.MODES)}")
    pattern = re.compile(rf"^{re.escape(BEGIN)}$.*?^{re.escape(END)}$", re.S | re.M)
    if len(pattern.findall(source)) != 1:
        raise ValueError(f"{HELPER} must hold one block from {BEGIN!r} to {END!r}")
    questions = sorted(ANSWERS)
    lines = [BEGIN]
    if mode == "counted":
        lines += ["# Written by the release build from the quiz's settings: a counted quiz, marked after the",
                  "# deadline on the grading side. No answer key, digest or explanation ships with it.",
                  'MODE = "counted"', *_tuple("QUESTIONS: tuple[str, ...]", questions),
                  "ANSWER_HASHES: dict[str, str] = {}", "EXPLANATIONS: dict[str, dict[str, str]] = {}"]
    else:
        digest = helper_module(source)._digest
        lines += ["# Written by the release build from the hidden key: a self-check quiz.",
                  'MODE = "self-check"', *_tuple("QUESTIONS: tuple[str, ...]", questions),
                  '# Question id -> SHA-256 digest of "<id>:<right letter>:<SALT>".',
                  "ANSWER_HASHES: dict[str, str] = {"]
        lines += [f"    {q!r}: {digest(q, quiz.shown_letter(ANSWERS[q], orders[q]))!r},".replace("'", '"')
                  for q in questions]
        lines += ["}", "# Question id -> option -> what that option gets right or wrong.",
                  "EXPLANATIONS: dict[str, dict[str, str]] = {"]
        for q in questions:
            lines.append(f'    "{q}": {{')
            for i, shown in enumerate(quiz.OPTIONS):
                lines += _string_entry(shown, EXPLANATIONS[q][orders[q][i]])
            lines.append("    },")
        lines.append("}")
    lines.append(END)
    return pattern.sub(lambda _: "\n".join(lines), source)


def _tuple(target: str, items: list[str], width: int = 100) -> list[str]:
    out, line = [f"{target} = ("], "   "
    for item in items:
        if len(line) + len(item) + 4 > width:
            out.append(line)
            line = "   "
        line += f' "{item}",'
    return out + [line, ")"]


def _literal(text: str) -> str:
    """A Python string literal of `text`, double-quoted where it can be."""
    return f'"{text}"' if '"' not in text and "\\" not in text and "\n" not in text else repr(text)


def _string_entry(key: str, text: str, width: int = 100) -> list[str]:
    """`"key": "text",` over as many lines as it takes, as implicitly concatenated literals."""
    first, rest = f'        "{key}": ', "            "
    chunks: list[str] = []
    current = ""
    for word in text.split(" "):
        candidate = f"{current} {word}" if current else word
        limit = width - len(first if not chunks else rest) - 4
        if current and len(candidate) + 1 > limit:
            chunks.append(current + " ")
            current = word
        else:
            current = candidate
    chunks.append(current)
    lines = [(first if i == 0 else rest) + _literal(chunk) for i, chunk in enumerate(chunks)]
    lines[-1] += ","
    return lines


# ---------------------------------------------------------------- what a counted release must not hold


def readable_texts(path: Path) -> list[str]:
    """What a file says: its bytes as text and, for a notebook, its cells' sources and text outputs
    (in the raw JSON a quote is escaped)."""
    raw = path.read_bytes().decode("utf-8", errors="replace")
    texts = [raw]
    if path.suffix == ".ipynb":
        import json

        try:
            cells = json.loads(raw).get("cells", [])
        except ValueError:
            cells = []
        for cell in cells:
            source = cell.get("source", "")
            texts.append("".join(source) if isinstance(source, list) else str(source))
            for out in cell.get("outputs", []):
                text = out.get("text", "")
                texts.append("".join(text) if isinstance(text, list) else str(text))
    return texts


def key_leaks(folder: Path, digest: Any = None) -> list[str]:
    """Key material in any file under `folder`: a digest of any option of any question under quizcheck's
    own formula (`digest`, by default that of the quizcheck.py found there), a letter next to its
    question id (`"q01": "c"`, `answer_q01 = "c"`: whatever the order of the options, a released file
    never pairs them), or an explanation of an option. [] for a counted release."""
    from ..graders.quiz_key import ANSWERS, EXPLANATIONS

    folder = Path(folder)
    if digest is None:
        digest = helper_module((folder / HELPER).read_text(encoding="utf-8"))._digest
    needles: list[tuple[str, str]] = []
    for q in ANSWERS:
        needles += [(digest(q, letter), f"the digest of {q} option {letter}") for letter in quiz.OPTIONS]
        for option, text in EXPLANATIONS[q].items():
            needles.append((text[:40], f"the explanation of {q} option {option}"))
    patterns = [(re.compile(rf"\b{q}\b[\"']?\s*[:=]\s*[\"'][a-d][\"']|\banswer_{q}\s*=\s*\\?[\"'][a-d]\\?[\"']",
                            re.I), f"a letter given for {q}") for q in ANSWERS]
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        texts = readable_texts(path)
        found += [f"{path.name}: {what}" for needle, what in needles if any(needle in t for t in texts)]
        found += [f"{path.name}: {what}" for pattern, what in patterns if any(pattern.search(t) for t in texts)]
    return found


def counted_release_leaks(release: Path) -> list[str]:
    """For a release whose quiz notebook says it is counted: its key leaks ([] when it is not counted)."""
    import json

    notebook = Path(release) / f"{quiz.NOTEBOOK}.ipynb"
    if not notebook.is_file():
        return []
    if quiz.build_record(json.loads(notebook.read_text(encoding="utf-8"))).get("mode") != "counted":
        return []
    return key_leaks(release)

