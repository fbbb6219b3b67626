"""The quiz's facts that the release build and the quiz grader share: how a question reads in the
notebook, the two modes, and the option order a course secret gives.

* A question is a markdown cell `qNN-question` of quiz.ipynb: a heading `### Question N`, the
  question's text, then its four options as the cell's last lines, `- **a**: ...` to `- **d**: ...`.
  Its answer cell is `quiz-qNN` and defines `answer_qNN`. The notebook is the one place the
  question and option texts are written; the right letters and the explanations of every option
  are the hidden key's (autograder/graders/quiz_key.py), in the order the source notebook shows
  the options (its "canonical" letters).
* Modes: `self-check` (the release's quizcheck.py says at once whether an answer is right, and
  why) or `counted` (the release holds no key material: its check cells record the answer and say
  that it is marked after the deadline). The build records the mode, and whether the options are
  shuffled, in the released notebook's metadata `quiz` (see `BUILD_METADATA`); nothing else.
* A shuffled course shows each question's options in the order `option_order(secret, id)` gives:
  a keyed hash of the course secret, so the order is the same for every student of the course,
  differs between courses, and cannot be worked out from the release without the secret. The
  release never holds the secret or anything computed from it but the order itself; the grader,
  given the same secret, computes the same order and scores the key against it.

This module holds no key material and imports nothing of the graders.
"""

from __future__ import annotations

import ast
import hashlib
import hmac
import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

from . import releases

OPTIONS = ("a", "b", "c", "d")
POINTS_PER_QUESTION = 1  # the quiz grader's points for a question (the quiz is worth one per question of the key)
MODES = ("self-check", "counted")
DEFAULT_MODE = "self-check"
NOTEBOOK = "quiz"  # quiz.ipynb
BUILD_METADATA = "quiz"  # the released notebook's metadata key: {"mode": ..., "options": AS_WRITTEN | SHUFFLED}
AS_WRITTEN, SHUFFLED = "as written", "shuffled"
# Cells of the source notebook kept in one mode only (a cell tag; the build drops the other mode's cells).
MODE_TAGS = {"self-check": "quiz-self-check", "counted": "quiz-counted"}

OPTION_LINE = re.compile(r"^- \*\*([a-d])\*\*: (.*)$")
QUESTION_CELL = re.compile(r"^(q\d+)-question$")
NUMBER = re.compile(r"^#+\s*Question\s+(\d+)\s*$")


def question_cell_id(question_id: str) -> str:
    return f"{question_id}-question"


def answer_cell_id(question_id: str) -> str:
    return f"quiz-{question_id}"


@dataclass(frozen=True)
class Question:
    """One question as a notebook shows it: its id, number, text and options (letter -> text)."""

    id: str
    number: int
    text: str  # markdown, without the headings
    options: dict[str, str]

    @property
    def plain_text(self) -> str:
        return plain(self.text)

    def short(self, limit: int = 160) -> str:
        """The question's text as one line of at most `limit` characters."""
        return shorten(self.plain_text, limit)

    def title(self, limit: int = 90) -> str:
        """The question itself (its last sentence, the one that asks), at most `limit` characters."""
        text = self.plain_text
        asks = [s for s in re.split(r"(?<=[.?!:])\s+", text) if s.endswith("?")]
        return shorten(asks[-1] if asks else text, limit)

    def option(self, letter: str, limit: int = 160) -> str:
        return shorten(plain(self.options.get(letter, "")), limit)


def _source(cell: Any) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def split_question(source: str) -> tuple[list[str], list[tuple[str, str]]]:
    """A question cell's lines before its options, and its options [(letter, text)] as written.
    ValueError unless the cell ends with exactly the options a to d, in that order."""
    lines = source.rstrip("\n").split("\n")
    options: list[tuple[str, str]] = []
    while lines and (option := OPTION_LINE.match(lines[-1])):
        lines.pop()
        letter, text = option.groups()
        options.insert(0, (letter, text))
    if tuple(letter for letter, _ in options) != OPTIONS:
        raise ValueError(f"a question cell must end with the options {', '.join(OPTIONS)}, one a line "
                         f"('- **a**: ...'); found {[letter for letter, _ in options]}")
    return lines, options


def read_questions(notebook: Mapping[str, Any]) -> dict[str, Question]:
    """question id -> Question, from a notebook (a dict as json.load gives, or an nbformat node)."""
    found: dict[str, Question] = {}
    for cell in notebook.get("cells", []):
        match = QUESTION_CELL.match(str(cell.get("id", "")))
        if cell.get("cell_type") != "markdown" or not match:
            continue
        head, options = split_question(_source(cell))
        number = next((int(m.group(1)) for m in map(NUMBER.match, head) if m), 0)
        text = "\n".join(line for line in head if not line.lstrip().startswith("#")).strip()
        found[match.group(1)] = Question(match.group(1), number, text, dict(options))
    return found


def build_record(notebook: Mapping[str, Any]) -> dict[str, str]:
    """What the build recorded in a released quiz notebook ({} for a notebook it did not build)."""
    record = (notebook.get("metadata") or {}).get(BUILD_METADATA)
    return dict(record) if isinstance(record, Mapping) else {}


# ---------------------------------------------------------------- the option order of a course


def option_order(secret: str, question_id: str) -> tuple[str, ...]:
    """The canonical options of `question_id` in the order a course with `secret` shows them:
    displayed letter OPTIONS[i] shows canonical option order[i]. Sorting by a keyed hash (HMAC-SHA256)
    of each option gives every order the same chance and is the same on every machine."""
    if not secret:
        raise ValueError("shuffling the quiz's options needs the course secret ($AUTOGRADER_SECRET)")
    key = secret.encode("utf-8")
    return tuple(sorted(OPTIONS, key=lambda o: hmac.new(key, f"quiz option order\0{question_id}\0{o}".encode(),
                                                          hashlib.sha256).digest()))


def option_orders(question_ids, secret: str | None) -> dict[str, tuple[str, ...]]:
    """question id -> its order: the secret's when `secret` is given, as written when it is None."""
    return {q: OPTIONS if secret is None else option_order(secret, q) for q in question_ids}


def shown_letter(canonical: str, order: tuple[str, ...]) -> str:
    """The letter under which a course shows the canonical option `canonical`."""
    return OPTIONS[order.index(canonical)]


def canonical_letter(shown: str, order: tuple[str, ...]) -> str:
    """The canonical option a course shows under the letter `shown`."""
    return order[OPTIONS.index(shown)]


def shuffled_question(source: str, order: tuple[str, ...]) -> str:
    """A question cell with its options shown in `order`, lettered a to d again."""
    head, options = split_question(source)
    texts = dict(options)
    return "\n".join(head + [f"- **{OPTIONS[i]}**: {texts[canonical]}" for i, canonical in enumerate(order)])


def relettered_answer(source: str, question_id: str, order: tuple[str, ...]) -> str:
    """An answer cell whose `answer_qNN = "x"` (the solution) names the same option under `order`."""
    pattern = re.compile(rf"(\banswer_{re.escape(question_id)}\s*=\s*)([\"'])([a-dA-D])\2")
    return pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{shown_letter(m.group(3).lower(), order)}{m.group(2)}",
                       source)


# ---------------------------------------------------------------- text


def plain(markdown: str) -> str:
    """Markdown of a question or option as plain text on one line: *i* -> i, `x` -> x, w<sub>ij</sub> -> w_ij."""
    text = re.sub(r"<sub>(.*?)</sub>", r"_\1", markdown)
    text = re.sub(r"<sup>(.*?)</sup>", r"^\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"\*\*(.+?)\*\*|\*(.+?)\*|`(.+?)`", lambda m: next(g for g in m.groups() if g is not None), text)
    return " ".join(text.split())


def shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


# ---------------------------------------------------------------- whether the quiz counts


COURSE_CONFIG = "nbgrader_config.py"
PART = "quiz"


@dataclass(frozen=True)
class QuizCounting:
    """Whether a grading run counts the quiz's points in the total, and on whose word (for the run's first
    lines): a self-check quiz is formative (SPEC), so it counts only when the instructor says so."""

    counts: bool
    mode: str  # the course's quiz mode, as far as the grader knows it
    source: str  # where the decision comes from: "--quiz-counts", "nbgrader_config.py", ...

    def line(self) -> str:
        """The line the run prints first, on stderr."""
        if not self.counts:
            return (f"quiz: {self.mode}, reported and not counted in the total ({self.source}; --quiz-counts "
                    "counts it)")
        warning = ("; its release tells students which answer is right, so its points go to anyone who tries"
                   if self.mode != "counted" else "")
        return (f"quiz: {self.mode}, counted in the total ({self.source}); on Gradescope its checks and score are "
                f"shown only after the due date{warning}")


def counts_in_mode(mode: str, counts: bool | None) -> bool:
    """Whether the quiz counts, given the course's mode and its QuizRelease.counts (None: not set): a counted
    quiz counts, a self-check one does not, unless the course says otherwise."""
    return mode == "counted" if counts is None else counts


def quiz_settings(config: str) -> dict[str, Any] | None:
    """The last `c.QuizRelease.mode` and `c.QuizRelease.counts` that a course's nbgrader_config.py sets, read
    without running it (running it imports nbgrader, on every grading run in a course's folder and in every
    quiz grade cell under `nbgrader autograde`; docs/performance.md); None when one is set
    to anything but a literal, or inside a block (then only running the file says what it is)."""
    try:
        tree = ast.parse(config)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    top = {id(node) for node in tree.body}
    found: dict[str, Any] = {}
    for node in sorted((n for n in ast.walk(tree) if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
        for name in filter(None, map(_quiz_setting, node.targets)):
            if id(node) not in top:
                return None
            try:
                found[name] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                return None
    return found


def _quiz_setting(target: ast.expr) -> str | None:
    """"mode" or "counts" for an assignment's target `c.QuizRelease.mode` / `c.QuizRelease.counts`."""
    if (isinstance(target, ast.Attribute) and target.attr in ("mode", "counts")
            and isinstance(target.value, ast.Attribute) and target.value.attr == "QuizRelease"
            and isinstance(target.value.value, ast.Name) and target.value.value.id == "c"):
        return target.attr
    return None


def released_mode(release: releases.Release | None = None) -> str:
    """The mode `release` (None: the grader's own) was built in (self-check when it says nothing)."""
    try:
        notebook = json.loads(releases.or_own(release).notebook(NOTEBOOK) or b"")
    except (OSError, ValueError):
        return DEFAULT_MODE
    mode = build_record(notebook).get("mode") if isinstance(notebook, dict) else None
    return mode if mode in MODES else DEFAULT_MODE


# ---------------------------------------------------------------- the quiz a student was shown
#
# A student's quiz.ipynb is read (model.submission) into plain data, `shown_quiz`: its build record and
# each question cell's text and options. The grader (graders/test_quiz.py) checks that data against the
# course (`shown_build`): the question texts must be the release's, and the options must be shown in the
# order of a build the course made (as written, or the course secret's order for a shuffled build). The
# right answers come from the hidden key alone; the student's notebook only says what was shown.

MAX_SHOWN_QUESTIONS = 64  # question cells kept from a notebook (the quiz has 22)
MAX_QUESTION_CHARS = 8_000  # a question cell's source (the longest released one has under 1,000)
MAX_RECORD_CHARS = 32  # a build record's value ("self-check", "as written", ...)
MAX_UNNAMED_CELLS = 4 * MAX_SHOWN_QUESTIONS  # markdown cells without a question's id read (the quiz has 26 in all)
DUPLICATED = "appears more than once"


def shown_quiz(notebook: object) -> dict[str, Any]:
    """What a student's quiz notebook (parsed JSON) shows, as plain data that crosses processes: {"record":
    {"mode", "options"}, "questions": {id: {"number", "text", "options": [a, b, c, d]} or a reason it cannot
    be read}, "numbered": {"N": the same}}. "questions" holds the cells its question cell ids name; "numbered",
    the readable question cells whose ids name none, by their heading's number (a notebook whose cell ids were
    made anew: a round trip through Jupytext). Bounded: at most MAX_SHOWN_QUESTIONS cells in each, of at most
    MAX_QUESTION_CHARS each."""
    if not isinstance(notebook, dict):
        return {"record": {}, "questions": {}, "numbered": {}}
    metadata = notebook.get("metadata")
    record = metadata.get(BUILD_METADATA) if isinstance(metadata, dict) else None
    kept = {k: v for k, v in record.items() if k in ("mode", "options") and type(v) is str
            and len(v) <= MAX_RECORD_CHARS} if isinstance(record, dict) else {}
    cells = notebook.get("cells")
    questions: dict[str, Any] = {}
    numbered: dict[str, Any] = {}
    unnamed = 0  # markdown cells whose ids name no question, looked at
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "markdown":
            continue
        ident = cell.get("id")
        match = QUESTION_CELL.match(ident[:16]) if type(ident) is str else None  # nbformat's ids are text
        if match is None:
            unnamed += 1
            if unnamed <= MAX_UNNAMED_CELLS:
                _keep_numbered(numbered, _shown_question(cell))
            continue
        if len(questions) >= MAX_SHOWN_QUESTIONS and match.group(1) not in questions:
            break
        questions[match.group(1)] = DUPLICATED if match.group(1) in questions else _shown_question(cell)
    return {"record": kept, "questions": questions, "numbered": numbered}


def _keep_numbered(numbered: dict[str, Any], shown: dict[str, Any] | str) -> None:
    """A cell that reads as question N ("### Question N", then the options a to d), kept under "N"."""
    if not isinstance(shown, dict) or not shown["number"]:
        return
    number = str(shown["number"])
    if number in numbered or len(numbered) < MAX_SHOWN_QUESTIONS:
        numbered[number] = DUPLICATED if number in numbered else shown


def _shown_question(cell: dict) -> dict[str, Any] | str:
    """One question cell as plain data, or why it cannot be read."""
    source = cell.get("source", "")
    if type(source) is list and all(type(line) is str for line in source) and len(source) <= MAX_QUESTION_CHARS:
        source = "".join(source)
    if type(source) is not str:
        return "its text is not text"
    if len(source) > MAX_QUESTION_CHARS:
        return f"it holds over {MAX_QUESTION_CHARS:,} characters"
    try:
        head, options = split_question(source)
    except ValueError:
        return "it does not end with the options a to d"
    number = next((int(m.group(1)) for m in map(NUMBER.match, head) if m and len(m.group(1)) <= 3), 0)
    text = "\n".join(line for line in head if not line.lstrip().startswith("#")).strip()
    return {"number": number, "text": text, "options": [t for _, t in options]}


@dataclass(frozen=True)
class ShownQuestion:
    """How a course shows one question: the question as a student's notebook shows it, and the order of the
    canonical options under its letters (or `refused`: why the notebook's question cannot be graded)."""

    question: Question | None
    order: tuple[str, ...] = OPTIONS
    refused: str = ""


def shown_build(shown: object, release: Mapping[str, Question], release_order: Mapping[str, tuple[str, ...]],
                secret: str, question_id: str, *, course_shuffles: bool) -> ShownQuestion:
    """`question_id` as the student's notebook (`shown`, from `shown_quiz`) shows it, checked against the
    course: `release` holds the grader's release's questions, shown in `release_order` (question id ->
    order); `course_shuffles` says whether the course's build (the grader's copy of the release) shuffles
    the options. The notebook's options must be the release's, in the order of a build the course made: as
    written, or the secret's order (`secret` must then be given: ValueError otherwise). Its question cell is
    the one its id names, else the one numbered as the question (a notebook whose cell ids were made anew),
    except in a notebook of a shuffled course that records no build: without its ids and its record, which
    build it is would be a guess."""
    data = shown if isinstance(shown, dict) else {}
    record = found if isinstance(found := data.get("record"), dict) else {}
    questions = found if isinstance(found := data.get("questions"), dict) else {}
    numbered = found if isinstance(found := data.get("numbered"), dict) else {}
    canonical = release.get(question_id)
    if canonical is None:
        raise ValueError(f"the grader's release has no question {question_id}")
    texts = {release_order[question_id][i]: canonical.options[letter] for i, letter in enumerate(OPTIONS)}
    claimed = record.get("options")
    if claimed not in (AS_WRITTEN, SHUFFLED, None):
        return ShownQuestion(None, refused="its record of how the quiz was built (the notebook's metadata "
                                           f"'{BUILD_METADATA}') is not one this grader wrote")
    item = questions.get(question_id)
    if item is None and not (claimed is None and course_shuffles):
        item = numbered.get(str(canonical.number))
    if not isinstance(item, dict):
        return _unshown(question_id, canonical, texts, claimed, secret, item, course_shuffles)
    options = found if isinstance(found := item.get("options"), list) else []
    asked = Question(question_id, canonical.number, str(item.get("text", "")), dict(zip(OPTIONS, map(str, options))))
    if plain(asked.text) != plain(canonical.text):
        return ShownQuestion(None, refused=f"the text of question {canonical.number} is not the course's")
    order = shown_order(asked, texts)
    if order is None:
        return ShownQuestion(None, refused=f"the options of question {canonical.number} are not the course's")
    expected = _expected_orders(claimed, order, question_id, secret)
    if order not in expected:
        return ShownQuestion(None, refused=_other_order(claimed, canonical.number))
    return ShownQuestion(asked, order)


def shown_order(asked: Question, texts: Mapping[str, str]) -> tuple[str, ...] | None:
    """The canonical options that `asked` shows under a to d, by their texts (None: not the same options)."""
    by_text = {plain(text): letter for letter, text in texts.items()}
    order = tuple(by_text.get(plain(asked.options.get(letter, "")), "") for letter in OPTIONS)
    return order if sorted(order) == list(OPTIONS) and len(by_text) == len(OPTIONS) else None


def _expected_orders(claimed: str | None, order: tuple[str, ...], question_id: str,
                     secret: str) -> tuple[tuple[str, ...], ...]:
    """The order a build the course made shows: the one the notebook records; where it records none, as
    written when the options are shown so (or there is no secret), else the secret's."""
    if claimed == AS_WRITTEN:
        return (OPTIONS,)
    if claimed is None and (order == OPTIONS or not secret):
        return (OPTIONS,)
    return (option_order(secret, question_id),)


def _unshown(question_id: str, canonical: Question, texts: Mapping[str, str], claimed: str | None, secret: str,
             why: object, course_shuffles: bool) -> ShownQuestion:
    """A question whose cell the notebook lacks, or cannot be read: graded in the order its record states, or
    as written where that is the course's only order (the text quoted is the release's); refused when the
    notebook does not say which of a shuffled course's builds it is."""
    if claimed is None and course_shuffles:
        what = f"cannot be read ({why})" if isinstance(why, str) else "is missing"
        return ShownQuestion(None, refused=f"its cell of question {canonical.number} {what}, and the notebook "
                                           "does not record how its options were built")
    order = option_order(secret, question_id) if claimed == SHUFFLED else OPTIONS
    shown = Question(question_id, canonical.number, canonical.text, {OPTIONS[i]: texts[c] for i, c in enumerate(order)})
    return ShownQuestion(shown, order)


def _other_order(claimed: str | None, number: int) -> str:
    if claimed == AS_WRITTEN:
        return f"it shows the options of question {number} in another order than the one it records (as written)"
    return (f"it shows the options of question {number} in another order than this course's (the order the "
            "course secret gives): it comes from a release built with another secret, or for another course")
