"""Hidden grader for the quiz: one point per question, the hidden key scored against the options as
the course's release shows them. The feedback quotes the question and the option chosen and says
why it is right or, for a wrong answer, which option is right and why.

Where each fact comes from, once:
* the right letters and the explanations of every option: the hidden key (quiz_key.py), in the
  source notebook's order of the options;
* the question and option texts, and how the release was built (its mode; options as written or
  shuffled): the grader's own copy of the release (autograder.assignment.release_folder()), read
  at import, never the submission;
* the order of a shuffled course's options: the course secret this run grades with, the same
  secret the release was built with (autograder.quiz.option_order), so the grader and the
  released notebook agree without the release holding the secret.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import pytest

from autograder import assignment, quiz
from autograder.core.checks import Failure, check
from autograder.core.plugin import PLUGIN
from autograder.graders.quiz_key import ANSWERS, EXPLANATIONS
from autograder.isolation.proxy import StudentError

PART = "quiz"
POINTS = 1
NAME = "{question}: {title}"


@lru_cache(maxsize=8)
def released(folder: str) -> tuple[dict[str, str], dict[str, quiz.Question]]:
    """(build record, questions) of the quiz notebook in the release folder `folder`; ({}, {}) when it
    cannot be read (then the feedback names letters only)."""
    try:
        notebook = json.loads((Path(folder) / f"{quiz.NOTEBOOK}.ipynb").read_text(encoding="utf-8"))
        return quiz.build_record(notebook), quiz.read_questions(notebook)
    except (OSError, ValueError, TypeError, AttributeError, KeyError):
        return {}, {}


def release() -> tuple[dict[str, str], dict[str, quiz.Question]]:
    try:
        folder = assignment.release_folder()
    except FileNotFoundError:
        return {}, {}
    return released(str(folder))


def _title(question: str) -> str:
    shown = release()[1].get(question)
    return shown.title() if shown is not None else "the right option"


@pytest.mark.parametrize("question, title", [pytest.param(q, _title(q), id=q) for q in sorted(ANSWERS)])
@check(NAME, points=POINTS)
def test_answer(request, student, note, question, title):
    record, questions = release()
    order = option_order(request, record, question)  # before the submission is asked: a fault here is ours
    try:
        answer = student.get(f"answer_{question}")
    except StudentError:
        answer = None
    given = answer.strip().lower() if type(answer) is str else None
    right = quiz.shown_letter(ANSWERS[question], order)
    shown = questions.get(question)

    def option(letter: str) -> str:
        text = shown.option(letter) if shown is not None else ""
        return f'{letter}, "{text}"' if text else letter

    def why(letter: str) -> str:
        return EXPLANATIONS[question][quiz.canonical_letter(letter, order)]

    asked = f"question {shown.number}: {shown.short(240)}" if shown is not None else f"question {question}"
    if given == right:
        note(f"{asked[0].upper()}{asked[1:]}\nYour answer: {option(right)}: right. {why(right)}")
        return
    if given in quiz.OPTIONS:
        got, hint = option(given), why(given)
    elif answer is None:
        got, hint = "no answer (None)", (f"set answer_{question} to one of \"a\", \"b\", \"c\" or \"d\" in its answer "
                                         "cell: only the answer cells are graded")
    else:
        got = f"{str(answer)[:20]!r}, which is not one of the options a to d"
        hint = f'set answer_{question} to one of the strings "a", "b", "c" or "d", with the quotes'
    lines = [f"Checked: answer_{question}, {asked}", f"Expected: {option(right)}", f"Got: {got}",
             f"Likely mistake: {hint}", f"Why {right} is right: {why(right)}"]
    raise Failure("\n".join(lines), hint=hint)


def option_order(request: pytest.FixtureRequest, record: dict[str, str], question: str) -> tuple[str, ...]:
    """The order in which this course's release shows the canonical options of `question`."""
    if record.get("options") != quiz.SHUFFLED:
        return quiz.OPTIONS
    secret = request.config.stash[PLUGIN].current.secret
    if not secret:
        raise RuntimeError("the quiz's release shows its options in the order of a course secret: grade with "
                           "the secret it was built with (--secret or $AUTOGRADER_SECRET)")
    return quiz.option_order(secret, question)
