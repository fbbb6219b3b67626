"""The quiz as a student's notebook shows it (issue 46, item 1): `quiz.shown_quiz` reads it bounded,
`quiz.shown_build` checks it against the course (the release's questions, the secret's option order)
and says what disagrees. The committed release (options as written) stands in for the course's."""

from __future__ import annotations

import copy
import json

import pytest

from autograder import assignment, quiz
from autograder.graders.quiz_key import ANSWERS

SECRET, OTHER = "course-secret", "another-course"


@pytest.fixture(scope="module")
def release_notebook() -> dict:
    return json.loads((assignment.release_folder() / "quiz.ipynb").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def release(release_notebook) -> dict[str, quiz.Question]:
    return quiz.read_questions(release_notebook)


def built(notebook: dict, secret: str | None) -> dict:
    """The notebook as a course with `secret` (None: options as written) would release it."""
    nb = copy.deepcopy(notebook)
    orders = quiz.option_orders(ANSWERS, secret)
    for cell in nb["cells"]:
        match = quiz.QUESTION_CELL.match(str(cell.get("id", "")))
        if match:
            cell["source"] = quiz.shuffled_question("".join(cell["source"]), orders[match.group(1)])
    nb["metadata"]["quiz"] = {"mode": "counted", "options": quiz.SHUFFLED if secret else quiz.AS_WRITTEN}
    return nb


def check(shown: dict, release, question: str = "q05", secret: str = SECRET) -> quiz.ShownQuestion:
    """`question` checked against a course with `secret` whose build shuffles the options ("": as written)."""
    return quiz.shown_build(json.loads(json.dumps(shown)), release, {question: quiz.OPTIONS}, secret, question,
                            course_shuffles=bool(secret))


def cell_of(nb: dict, question: str) -> dict:
    return next(c for c in nb["cells"] if c.get("id") == quiz.question_cell_id(question))


def test_a_shuffled_notebook_is_graded_in_the_order_it_shows(release_notebook, release):
    shown = quiz.shown_quiz(built(release_notebook, SECRET))
    assert shown["record"] == {"mode": "counted", "options": quiz.SHUFFLED} and len(shown["questions"]) == len(ANSWERS)
    for q in ANSWERS:
        seen = check(shown, release, q)
        assert not seen.refused and seen.order == quiz.option_order(SECRET, q)
        for i, letter in enumerate(quiz.OPTIONS):  # what the student saw under each letter
            assert seen.question.options[letter] == release[q].options[seen.order[i]]


def test_the_as_written_release_is_graded_as_written(release_notebook, release):
    seen = check(quiz.shown_quiz(release_notebook), release, secret="")
    assert not seen.refused and seen.order == quiz.OPTIONS and seen.question.text == release["q05"].text


def test_another_courses_build_is_refused_saying_what_disagrees(release_notebook, release):
    shown = quiz.shown_quiz(built(release_notebook, OTHER))
    refused = [q for q in ANSWERS if check(shown, release, q).refused]
    same = [q for q in ANSWERS if quiz.option_order(OTHER, q) == quiz.option_order(SECRET, q)]
    assert sorted(refused + same) == sorted(ANSWERS) and len(refused) > len(ANSWERS) // 2
    assert "another order than this course's (the order the course secret gives)" in check(shown, release,
                                                                                             refused[0]).refused


def test_a_notebook_that_says_as_written_but_shows_another_order_is_refused(release_notebook, release):
    nb = built(release_notebook, SECRET)
    nb["metadata"]["quiz"]["options"] = quiz.AS_WRITTEN
    q = next(q for q in ANSWERS if quiz.option_order(SECRET, q) != quiz.OPTIONS)
    assert "another order than the one it records (as written)" in check(quiz.shown_quiz(nb), release, q).refused


def test_a_changed_question_or_option_is_refused(release_notebook, release):
    nb = copy.deepcopy(release_notebook)
    cell_of(nb, "q05")["source"] = "".join(cell_of(nb, "q05")["source"]).replace("entropy", "ENTROPY")
    cell_of(nb, "q06")["source"] = "".join(cell_of(nb, "q06")["source"]).replace("- **b**: ", "- **b**: not ")
    shown = quiz.shown_quiz(nb)
    assert check(shown, release, "q05", "").refused == "the text of question 5 is not the course's"
    assert check(shown, release, "q06", "").refused == "the options of question 6 are not the course's"
    assert not check(shown, release, "q07", "").refused


def test_whitespace_and_a_missing_cell_still_agree(release_notebook, release):
    nb = built(release_notebook, SECRET)
    cell_of(nb, "q05")["source"] = cell_of(nb, "q05")["source"].replace(" ", "  ") + "\n\n"
    nb["cells"].remove(cell_of(nb, "q06"))
    shown = quiz.shown_quiz(nb)
    assert not check(shown, release, "q05").refused
    seen = check(shown, release, "q06")  # graded in the order its record states, quoting the release's text
    assert not seen.refused and seen.order == quiz.option_order(SECRET, "q06")
    assert seen.question.options["a"] == release["q06"].options[seen.order[0]]


def test_without_a_record_the_order_must_be_one_the_course_made(release_notebook, release):
    nb = built(release_notebook, SECRET)
    del nb["metadata"]["quiz"]
    shown = quiz.shown_quiz(nb)
    assert all(not check(shown, release, q).refused for q in ANSWERS)  # the secret's order
    q = next(q for q in ANSWERS if quiz.option_order(OTHER, q) not in (quiz.OPTIONS, quiz.option_order(SECRET, q)))
    assert check(quiz.shown_quiz({**built(release_notebook, OTHER), "metadata": {}}), release, q).refused
    nb["cells"].remove(cell_of(nb, "q07"))
    assert "is missing, and the notebook does not record how" in check(quiz.shown_quiz(nb), release, "q07").refused


def test_a_shuffled_notebook_needs_the_secret(release_notebook, release):
    nb = built(release_notebook, SECRET)
    nb["cells"].remove(cell_of(nb, "q05"))
    with pytest.raises(ValueError, match="secret"):
        check(quiz.shown_quiz(nb), release, "q05", secret="")


@pytest.mark.parametrize("notebook", [
    None, [], "text", {"cells": "no"}, {"metadata": {"quiz": "counted"}, "cells": [1, None, {"id": 5}]},
    {"metadata": {"quiz": {"mode": "x" * 10_000, "options": ["shuffled"]}}, "cells": []},
    {"cells": [{"cell_type": "markdown", "id": ["q01-question"] * 100_000, "source": "x"}]},  # an id not text
])
def test_anything_a_student_can_write_reads_as_plain_data(notebook):
    shown = quiz.shown_quiz(notebook)
    assert shown["record"] == {} and shown["questions"] == {}
    assert json.loads(json.dumps(shown)) == shown


def test_what_is_read_is_bounded(release_notebook, release):
    nb = copy.deepcopy(release_notebook)
    cell = cell_of(nb, "q05")
    cell["source"] = ["x" * 1000] * 100 + ["\n- **a**: 1\n- **b**: 2\n- **c**: 3\n- **d**: 4"]
    cell_of(nb, "q06")["source"] = [1, 2]
    many = [{"cell_type": "markdown", "id": f"q{i:03d}-question", "source": "- **a**: 1"} for i in range(100, 10_000)]
    nb["cells"] += many
    nb["cells"].append(copy.deepcopy(cell_of(nb, "q07")))
    shown = quiz.shown_quiz(nb)
    assert shown["questions"]["q05"] == "it holds over 8,000 characters"
    assert shown["questions"]["q06"] == "its text is not text"
    assert len(shown["questions"]) == quiz.MAX_SHOWN_QUESTIONS
    seen = check(shown, release, "q05", "")  # as written, by its record: graded, quoting the release's text
    assert not seen.refused and seen.question.text == release["q05"].text
    assert len(json.dumps(shown)) < quiz.MAX_SHOWN_QUESTIONS * (quiz.MAX_QUESTION_CHARS + 200)


def test_a_duplicated_question_cell_is_not_guessed_at(release_notebook, release):
    nb = built(release_notebook, SECRET)
    del nb["metadata"]["quiz"]
    nb["cells"].append(copy.deepcopy(cell_of(nb, "q07")))
    shown = quiz.shown_quiz(nb)
    assert shown["questions"]["q07"] == quiz.DUPLICATED
    assert "cannot be read (appears more than once)" in check(shown, release, "q07").refused


def round_tripped(notebook: dict) -> dict:
    """The notebook as Jupytext writes it back from a script: new cell ids, no notebook metadata but the kernel's
    (the build record gone); the cells, their nbgrader metadata and their text as they were."""
    nb = copy.deepcopy(notebook)
    for number, cell in enumerate(nb["cells"]):
        cell["id"] = f"{number * 7919:08x}"
    nb["metadata"] = {"kernelspec": notebook["metadata"]["kernelspec"]}
    return nb


def test_a_quiz_round_tripped_through_jupytext_is_graded_where_its_options_have_one_order(release_notebook, release):
    """Issue 53, item 9: without its cell ids and build record, a quiz was refused ("its cell of question N it is
    missing"). A course that shows the options as written has one order: each question is found by its number
    and checked as before; one the notebook lacks is graded as written."""
    nb = round_tripped(release_notebook)
    question = next(c for c in nb["cells"] if "### Question 6" in "".join(c["source"]))
    question["source"] = "".join(question["source"]).replace("- **b**: ", "- **b**: not ")
    nb["cells"].remove(next(c for c in nb["cells"] if "### Question 7" in "".join(c["source"])))
    shown = quiz.shown_quiz(nb)
    assert shown["record"] == {} and shown["questions"] == {} and len(shown["numbered"]) == len(ANSWERS) - 1
    graded = {q: check(shown, release, q, "") for q in ANSWERS}
    assert {q for q, seen in graded.items() if seen.refused} == {"q06"}
    assert graded["q06"].refused == "the options of question 6 are not the course's"
    assert graded["q05"].question.text == release["q05"].text and graded["q05"].order == quiz.OPTIONS
    assert graded["q07"].order == quiz.OPTIONS and graded["q07"].question.options == release["q07"].options


def test_a_shuffled_quiz_without_its_record_and_cell_ids_is_still_refused(release_notebook, release):
    """Which of a shuffled course's builds such a notebook is would be a guess."""
    shown = quiz.shown_quiz(round_tripped(built(release_notebook, SECRET)))
    for q in ANSWERS:
        assert check(shown, release, q).refused == (f"its cell of question {release[q].number} is missing, and the "
                                                    "notebook does not record how its options were built")


def test_question_cells_without_their_ids_are_read_within_bounds(release_notebook):
    nb = round_tripped(release_notebook)
    nb["cells"] = [{"cell_type": "markdown", "id": "x", "source": "note"}] * (quiz.MAX_UNNAMED_CELLS + 1) + nb["cells"]
    assert quiz.shown_quiz(nb)["numbered"] == {}  # only the first cells without a question's id are looked at
