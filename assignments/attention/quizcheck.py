# Source of truth: assignments/attention/quizcheck.py (release/ and solutions/ hold copies whose block of quiz
# data the release build fills in; edit the source, and the key in autograder/graders/quiz_key.py).
"""Feedback for the quiz in quiz.ipynb.

After answering a question, run its check cell::

    quizcheck.check("q01", answer_q01)

What it prints depends on the quiz's mode, which the release build (``make release``, or
``nbgrader generate_assignment``) wrote into the block of quiz data below:

* ``self-check``: whether the answer is right, with a one-line explanation of the option you
  picked (why it fits, or why it does not), so you can try again;
* ``counted``: that the answer is recorded, and that the quiz is marked after the deadline. A
  counted quiz's copy of this file holds no answer key, digest or explanation: nothing here, or
  anywhere in the notebook, says which option is right.

It never raises: an unanswered question (``None``) prints "not answered yet", and anything other
than one of the strings "a", "b", "c" or "d" (any case, spaces ignored) prints what is accepted.

In a self-check quiz, there is no answer key in this file either. For each question it keeps only
the SHA-256 hex digest of the UTF-8 text "<question id>:<letter>:<SALT>" for the right letter
(letters lower case, SALT as below), generated from the course's hidden answer key. They keep the
letters out of a casual read, not out of reach: with four options a question, trying them all is
what a self-check invites anyway. Grading, when the quiz counts, uses the hidden key alone.

``what_is_left(globals())`` returns the questions that are not answered (or, in a self-check quiz,
not right) yet ("" when none is left); the quiz's grade cell asserts that it is empty, so *Restart
& Run All* and nbgrader's *Validate* button show where the quiz stands. While nbgrader autogrades
it returns "" and checks nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import textwrap
from typing import Any, Mapping

__all__ = ["check", "what_is_left"]

SALT = "4f1428b0b7bed5b0779adf16"

OPTIONS = ("a", "b", "c", "d")

# BEGIN QUIZ DATA
# The release build writes this block (autograder/nbgrader/quizrelease.py): the mode, the
# question ids and, for a self-check quiz only, the digests of the right letters and the
# explanations, from the hidden key. In assignments/ it is empty: the key and the explanations
# live on the grading side, in autograder/graders/quiz_key.py.
MODE = "counted"
QUESTIONS: tuple[str, ...] = ()
# Question id -> SHA-256 digest of "<id>:<right letter>:<SALT>".
ANSWER_HASHES: dict[str, str] = {}
# Question id -> option -> what that option gets right or wrong.
EXPLANATIONS: dict[str, dict[str, str]] = {}
# END QUIZ DATA

_ACCEPTED = '"a", "b", "c" or "d"'


def _digest(question_id: str, letter: str) -> str:
    return hashlib.sha256(f"{question_id}:{letter}:{SALT}".encode("utf-8")).hexdigest()


def _show(value: object) -> str:
    """A short, safe description of whatever the student assigned."""
    try:
        text = repr(value)
    except Exception:
        text = f"a {type(value).__name__} object"
    return text if len(text) <= 40 else text[:37] + "..."


def _letter(answer: object) -> str | None:
    """The option an answer names ("a" to "d"), or None when it names none."""
    letter = str.lower(str.strip(answer)) if isinstance(answer, str) else None
    return letter if letter in OPTIONS else None


def _is_right(question_id: str, letter: str) -> bool:
    return _digest(question_id, letter) == ANSWER_HASHES[question_id]


def _self_check() -> bool:
    return MODE == "self-check"


def _ids() -> str:
    if not QUESTIONS:
        return ("this copy of quizcheck.py has no quiz data (the one in assignments/ is filled in by "
                "the release build: use the release's copy)")
    return f"the ids are {QUESTIONS[0]} to {QUESTIONS[-1]}"


def _feedback(question_id: object, answer: object) -> str:
    if not isinstance(question_id, str) or question_id not in QUESTIONS:
        return f"There is no question {_show(question_id)} in this quiz: {_ids()}."
    variable = f"answer_{question_id}"
    if answer is None:
        return (
            f"{question_id}: not answered yet. Replace None in {variable} with {_ACCEPTED}, "
            "then run the answer cell and this one again."
        )
    letter = _letter(answer)
    if letter is None:
        return (
            f"{question_id}: {_show(answer)} is not one of the options. "
            f"Set {variable} to one of the strings {_ACCEPTED}, with the quotes."
        )
    if not _self_check():
        return (f'{question_id}: answer "{letter}" recorded. The quiz is marked after the deadline: '
                "until then no check says whether an answer is right, and you may change it until you submit.")
    explanation = EXPLANATIONS[question_id][letter]
    if _is_right(question_id, letter):
        return f"✔ {question_id}: right! {explanation}"
    return f"✘ {question_id}: not this one. {explanation} Try another option."


def check(question_id: str, answer: object) -> None:
    """Print feedback on ``answer`` to the question ``question_id`` (e.g. "q01"); never raises."""
    try:
        message = _feedback(question_id, answer)
    except Exception as exc:  # feedback must never stop the quiz
        message = f"Could not check this answer ({type(exc).__name__}); set it to {_ACCEPTED}."
    try:
        print(message)
    except Exception:
        pass


def what_is_left(namespace: Mapping[str, Any]) -> str:
    """The questions not answered (in a self-check quiz: or not right) yet, a few lines; "" when none.

    Reads ``answer_q01`` ... from ``namespace`` (pass ``globals()``) and prints
    one ✔ line when every answer is right (counted: recorded). While nbgrader autogrades (it sets
    NBGRADER_EXECUTION) it checks nothing and returns "": the hidden key grades.
    """
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        return ""
    left: dict[str, list[str]] = {"not answered yet": [], "not one of a-d": [], "not right yet (✘)": []}
    for question_id in QUESTIONS:
        answer = namespace.get(f"answer_{question_id}")
        letter = _letter(answer)
        if answer is None:
            left["not answered yet"].append(question_id)
        elif letter is None:
            left["not one of a-d"].append(question_id)
        elif _self_check() and not _is_right(question_id, letter):
            left["not right yet (✘)"].append(question_id)
    if not any(left.values()):
        if _self_check():
            print(f"✔ quiz: all {len(QUESTIONS)} answers are right")
        else:
            print(f"✔ quiz: all {len(QUESTIONS)} answers recorded; the quiz is marked after the deadline")
        return ""
    lines = ["quiz: not finished"]
    for label, ids in left.items():
        if ids:  # wrapped to 76 columns: nbgrader's validate cuts longer lines
            lines += textwrap.wrap(f"{label}: {', '.join(ids)}", width=76, initial_indent="  ",
                                   subsequent_indent="    ")
    if os.environ.get("NBGRADER_EXECUTION") == "validate":
        _message_alone()
    return "\n".join(lines + ["  (the check under each question says more)"])


def _message_alone() -> None:
    """Under nbgrader's Validate (its own kernel), the failing grade cell shows its message alone, without
    the traceback around the assert (IPython's "Minimal" mode): what is left comes first."""
    with contextlib.suppress(Exception):  # the message is right either way
        from IPython import get_ipython

        shell = get_ipython()
        if shell is not None:
            shell.InteractiveTB.set_mode(mode="Minimal")
