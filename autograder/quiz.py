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

import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Any, Mapping

OPTIONS = ("a", "b", "c", "d")
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
    while lines and OPTION_LINE.match(lines[-1]):
        letter, text = OPTION_LINE.match(lines.pop()).groups()
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
