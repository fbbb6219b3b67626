"""Hidden grader for the quiz: one point per question, the hidden key scored against the options as the
student's own quiz.ipynb showed them. The feedback quotes the question and the option chosen, as the
student saw them, and says why it is right or, for a wrong answer, which option is right and why. The option
chosen and the right one, as the key letters them, go to the class's item analysis (`answered`), not to the student.

Where each fact comes from, once:
* the right letters and the explanations of every option: the hidden key (quiz_key.py), in the
  source notebook's order of the options;
* what the student was shown: the submission's quiz.ipynb (its build record and question cells, read
  by model.submission into `quiz.shown_quiz`'s plain data, served as `current.quiz_shown`), never trusted
  for an answer: its questions must be the course's (the release graded against: autograder.releases) and its options
  shown in the order of a build the course made, as written or the course secret's order
  (`quiz.shown_build`); a notebook that disagrees is not graded against anything else: each question it
  disagrees on fails, saying what disagrees;
* a submission without a quiz notebook (a .py module): the order of the release graded against, shuffled
  by the course secret when that release is.
"""

from __future__ import annotations

import json
from functools import lru_cache

import pytest

from autograder.engine.kit import (Failure, PLUGIN, StudentError, check, quiz, releases)
from autograder.graders.quiz_key import ANSWERS, EXPLANATIONS

PART = "quiz"
POINTS = quiz.POINTS_PER_QUESTION
NAME = "{question}: {title}"


@lru_cache(maxsize=8)
def released(release: releases.Release) -> tuple[dict[str, str], dict[str, quiz.Question]]:
    """(build record, questions) of the quiz notebook of `release`; ({}, {}) when it cannot be read (then
    the feedback names letters only)."""
    try:
        notebook = json.loads(release.notebook(quiz.NOTEBOOK) or b"")
        return quiz.build_record(notebook), quiz.read_questions(notebook)
    except (ValueError, TypeError, AttributeError, KeyError):
        return {}, {}


def release(graded_against: releases.Release | None) -> tuple[dict[str, str], dict[str, quiz.Question]]:
    """The quiz of the release graded against (`Current.release`): the course's build, or where the run gives
    none the grader's own (autograder.releases)."""
    try:
        return released(releases.or_own(graded_against))
    except FileNotFoundError:
        return {}, {}


def _title(question: str) -> str:
    """The check's title, fixed when the graders are collected (before any run's release is known): the
    question as the grader's own copy words it."""
    shown = release(None)[1].get(question)
    return shown.title() if shown is not None else "the right option"


@pytest.mark.parametrize("question, title", [pytest.param(q, _title(q), id=q) for q in sorted(ANSWERS)])
@check(NAME, points=POINTS)
def test_answer(request, student, note, answered, question, title):
    seen = as_shown(request, question)  # before the submission is asked: a fault here is ours
    if seen.refused:
        raise not_this_courses_quiz(question, seen.refused)
    order, shown = seen.order, seen.question
    try:
        answer = student.get(f"answer_{question}")
    except StudentError:
        answer = None
    given = answer.strip().lower() if type(answer) is str else None
    right = quiz.shown_letter(ANSWERS[question], order)
    answered(quiz.canonical_letter(given, order) if given in quiz.OPTIONS else "", ANSWERS[question])

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
        got, hint = "no answer (None)", f"set answer_{question} to one of \"a\", \"b\", \"c\" or \"d\" in its answer cell"
    else:
        got = f"{str(answer)[:20]!r}, which is not one of the options a to d"
        hint = f'set answer_{question} to one of the strings "a", "b", "c" or "d", with the quotes'
    lines = [f"Checked: answer_{question}, {asked}", f"Expected: {option(right)}", f"Got: {got}",
             f"Likely mistake: {hint}", f"Why {right} is right: {why(right)}"]
    raise Failure("\n".join(lines), hint=hint)


def as_shown(request: pytest.FixtureRequest, question: str) -> quiz.ShownQuestion:
    """`question` as the submission's quiz notebook showed it, checked against this course; for a submission
    without one, as the grader's copy of the release shows it. RuntimeError (a grader error: no score) when
    the course's order needs the secret and the run has none."""
    current = request.config.stash[PLUGIN].current
    record, questions = release(current.release)
    try:
        order = release_order(record, question, current.secret)
        if current.quiz_shown is None:
            return quiz.ShownQuestion(questions.get(question), order)
        return quiz.shown_build(current.quiz_shown, questions, {question: order}, current.secret, question,
                                course_shuffles=record.get("options") == quiz.SHUFFLED)
    except ValueError as exc:
        raise RuntimeError(f"the quiz cannot be checked: {exc}; grade with the secret the release was built with "
                           "(--secret or $AUTOGRADER_SECRET)") from None


def release_order(record: dict[str, str], question: str, secret: str) -> tuple[str, ...]:
    """The order in which the grader's copy of the release shows the canonical options of `question`."""
    return quiz.option_order(secret, question) if record.get("options") == quiz.SHUFFLED else quiz.OPTIONS


def not_this_courses_quiz(question: str, why: str) -> Failure:
    """The failure of a question the submission's quiz.ipynb does not show as this course released it."""
    hint = ("submit the quiz.ipynb of this course's release, with your answers in it: download it again and "
            "copy your answers into it if yours came from elsewhere or was changed by hand")
    lines = [f"Checked: answer_{question}, against the quiz as your quiz.ipynb shows it",
             f"Not graded: your quiz.ipynb is not the quiz this course released: {why}.",
             f"Likely mistake: {hint}"]
    return Failure("\n".join(lines), hint=hint)
