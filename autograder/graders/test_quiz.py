"""Hidden grader for the quiz: one point per question, answers from the hidden key."""

from __future__ import annotations

import pytest

from autograder.core.checks import check, expect
from autograder.graders.quiz_key import ANSWERS
from autograder.isolation.proxy import StudentError

PART = "quiz"


@pytest.mark.parametrize("question", sorted(ANSWERS))
@check("{question}: the right option", points=1)
def test_answer(student, question):
    try:
        answer = student.get(f"answer_{question}")
    except StudentError:
        answer = None
    given = answer.strip().lower() if type(answer) is str else answer
    expect(given == ANSWERS[question], f"answer_{question}", "the right option",
           "not answered" if answer is None else f"{str(answer)[:20]!r}, which is not it",
           "run the check cell under the question for an explanation")
