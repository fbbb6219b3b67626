"""The quiz's two modes and its per-course option order (autograder/nbgrader/quizrelease.py).

* A counted release, built by nbgrader exactly as ``make release`` builds it (``c.QuizRelease.mode =
  "counted"`` in the course's nbgrader_config.py), holds no key material: no digest of any option of
  any question under quizcheck's own formula, no letter next to a question id, no explanation; its
  check cells record the answer and say that it is marked after the deadline.
* Grading a counted quiz scores the hidden key: right answers full marks, wrong ones nothing.
* With ``shuffle`` on, two secrets give two option orders; the release built with a secret shows
  that order (and never the secret), and the grader, given the same secret, scores against it.
* The self-check release works as before (tests/test_release.py holds the rest of it).

Releases are built in temporary course folders; the grader runs in this process with the release
it reads (``autograder.assignment.release_folder``) pointed at them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from autograder import assignment, quiz
from autograder.engine.session import Job, grade_one, in_process_backend
from autograder.model.submission import read_submission
from autograder.graders.quiz_key import ANSWERS, EXPLANATIONS
from autograder.isolation.limits import Limits
from autograder.nbgrader import quizrelease
from tools import release as rel
from tools.course import make_course_root

pytestmark = pytest.mark.slow

ASSIGNMENT = rel.ASSIGNMENT
SOURCE = rel.ROOT / "assignments" / ASSIGNMENT
SECRETS = ("course-secret-one", "course-secret-two")


@contextlib.contextmanager
def environment(**values: str | None):
    saved = {k: os.environ.get(k) for k in values}
    try:
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def build(folder: Path, *, mode: str, shuffle: bool = False, secret: str | None = None) -> Path:
    """A course root whose nbgrader_config.py sets the quiz's mode, after ``generate_assignment``."""
    root = make_course_root(folder, course_id="quiz-modes", exchange=folder / "exchange")
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text(encoding="utf-8") +
                      f"\nc.QuizRelease.mode = {mode!r}\nc.QuizRelease.shuffle = {shuffle!r}\n", encoding="utf-8")
    with environment(AUTOGRADER_SECRET=secret):
        rel.generate_release(root)
    return root


@pytest.fixture(scope="module")
def counted(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("counted"), mode="counted") / "release" / ASSIGNMENT


@pytest.fixture(scope="module")
def shuffled(tmp_path_factory) -> dict[str, Path]:
    """secret -> the counted, shuffled release built with it."""
    return {s: build(tmp_path_factory.mktemp("shuffled"), mode="counted", shuffle=True, secret=s) / "release" / ASSIGNMENT
            for s in SECRETS}


def read(path: Path):
    return nbformat.read(path, as_version=4)


def load_quizcheck(folder: Path):
    return quizrelease.helper_module((folder / "quizcheck.py").read_text(encoding="utf-8"))


def grade(tmp_path: Path, monkeypatch, release: Path, answers: dict[str, str], secret: str):
    """(score, maximum, checks) of a .py submission answering `answers`, graded against `release`."""
    monkeypatch.setattr(assignment, "release_folder", lambda: release)
    path = tmp_path / f"sub{len(list(tmp_path.glob('sub*')))}.py"
    path.write_text("".join(f"answer_{q} = {a!r}\n" for q, a in answers.items()))
    graded = grade_one(Job(read_submission(path), secret, ("quiz",)), in_process_backend(), Limits())
    score, most = graded.part_scores()["quiz"]
    return score, most, graded


def shown_key(order_secret: str | None) -> dict[str, str]:
    """The key in the letters a course with `order_secret` (None: as written) shows."""
    orders = quiz.option_orders(ANSWERS, order_secret)
    return {q: quiz.shown_letter(a, orders[q]) for q, a in ANSWERS.items()}


def wrong(letter: str) -> str:
    return quiz.OPTIONS[(quiz.OPTIONS.index(letter) + 1) % 4]


# --------------------------------------------------------------------------
# a counted release holds no key material


def every_text(folder: Path) -> dict[Path, list[str]]:
    return {p: quizrelease.readable_texts(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def test_counted_release_holds_no_digest_letter_or_explanation(counted):
    source_helper = quizrelease.helper_module((SOURCE / "quizcheck.py").read_text(encoding="utf-8"))
    assert source_helper._digest("q01", "a") == hashlib.sha256(f"q01:a:{source_helper.SALT}".encode()).hexdigest()
    texts = every_text(counted)
    assert {p.name for p in texts} == {"attention.ipynb", "quiz.ipynb", "quizcheck.py", "selfcheck.py"}
    for path, parts in texts.items():
        for q, right in ANSWERS.items():
            for letter in quiz.OPTIONS:  # quizcheck's own formula, every option (so also the right one)
                assert not any(source_helper._digest(q, letter) in t for t in parts), (path, q, letter)
            pair = re.compile(rf"\b{q}\b\W{{0,4}}[:=]\W{{0,4}}{right}\b|answer_{q}\s*=\s*\\?['\"]{right}", re.I)
            assert not any(pair.search(t) for t in parts), (path, q)
            for option, why in EXPLANATIONS[q].items():
                assert not any(why[:40] in t for t in parts), (path, q, option)
    assert quizrelease.key_leaks(counted) == []
    quizcheck = load_quizcheck(counted)
    assert (quizcheck.MODE, quizcheck.ANSWER_HASHES, quizcheck.EXPLANATIONS) == ("counted", {}, {})
    assert quizcheck.QUESTIONS == tuple(sorted(ANSWERS))
    assert quiz.build_record(read(counted / "quiz.ipynb")) == {"mode": "counted", "options": quiz.AS_WRITTEN}


def test_the_leak_finder_finds_the_self_check_releases_key(tmp_path, counted):
    """Not vacuous: the self-check quizcheck.py, in a counted release, is refused."""
    leaky = tmp_path / ASSIGNMENT
    shutil.copytree(counted, leaky)
    (leaky / "quizcheck.py").write_text(rel.helper_text(SOURCE, "quizcheck.py", quizrelease.QuizRelease()))
    found = quizrelease.counted_release_leaks(leaky)
    assert sum("digest" in f for f in found) == len(ANSWERS)
    assert sum("explanation" in f for f in found) == 4 * len(ANSWERS)


def quiz_grade_cell_points(release: Path) -> float:
    cells = [c for c in read(release / "quiz.ipynb").cells
             if c.metadata.get("nbgrader", {}).get("grade_id") == "grade-quiz"]
    assert len(cells) == 1
    return cells[0].metadata.nbgrader.points


def test_a_counted_quiz_is_released_with_its_points_and_a_self_check_one_with_none(counted):
    """nbgrader's gradebook totals follow the grader's: a counted quiz's grade cell keeps its 22 points,
    the self-check release (this repository's) gives it 0, so `nbgrader export` leaves it out."""
    assert quiz_grade_cell_points(counted) == 22
    assert quiz_grade_cell_points(assignment.release_folder()) == 0


def test_a_self_check_quiz_the_course_counts_keeps_its_points(tmp_path):
    root = build(tmp_path, mode="self-check")
    config = root / "nbgrader_config.py"
    config.write_text(config.read_text(encoding="utf-8") + "\nc.QuizRelease.counts = True\n", encoding="utf-8")
    rel.generate_release(root)
    assert quiz_grade_cell_points(root / "release" / ASSIGNMENT) == 22


def test_counted_notebook_says_it_is_marked_after_the_deadline(counted):
    nb = read(counted / "quiz.ipynb")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert text.startswith("# Quiz: attention") and "Self-check" not in text
    assert "marked after" in text and "How is it marked?" in text and "tells you at once" not in text
    assert not any(c.metadata.get("tags") and set(c.metadata["tags"]) & set(quiz.MODE_TAGS.values())
                   for c in nb.cells)
    checks = [c.source for c in nb.cells if "quizcheck.check(" in c.source]
    assert checks == [f'quizcheck.check("{q}", answer_{q})' for q in sorted(ANSWERS)]


def test_counted_check_cells_record_the_answer_and_say_it_is_marked_after_the_deadline(counted, tmp_path):
    """The released notebook, answers filled in, run top to bottom: each check cell records its
    answer and says the quiz is marked after the deadline; the grade cell's summary passes."""
    scratch = tmp_path / ASSIGNMENT
    shutil.copytree(counted, scratch)
    nb = read(scratch / "quiz.ipynb")
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("quiz-q"):
            cell.source = cell.source.replace("# YOUR ANSWER HERE", f'answer_{grade_id[5:]} = "a"')
    kernel = rel.write_venv_kernelspec(tmp_path / "jupyter")
    nb = rel.execute_notebook(nb, scratch, kernel, timeout=120)
    checks = [c for c in nb.cells if c.cell_type == "code" and "quizcheck.check(" in c.source]
    assert len(checks) == len(ANSWERS)
    for cell in checks:
        printed = "".join(o.get("text", "") for o in cell.outputs)
        question = re.search(r'check\("(q\d+)"', cell.source).group(1)
        assert printed.startswith(f'{question}: answer "a" recorded. The quiz is marked after the deadline'), printed
        assert "right" not in printed.replace("whether an answer is right", ""), printed
    summary = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    assert summary == f"✔ quiz: all {len(ANSWERS)} answers recorded; the quiz is marked after the deadline\n"


def test_counted_quizcheck_names_what_is_not_answered(counted, capsys):
    quizcheck = load_quizcheck(counted)
    quizcheck.check("q01", None)
    quizcheck.check("q01", " X ")
    quizcheck.check("q01", "C ")
    quizcheck.check("q99", "a")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("q01: not answered yet.") and "not one of the options" in lines[1]
    assert lines[2].startswith('q01: answer "c" recorded. The quiz is marked after the deadline')
    assert lines[3] == "There is no question 'q99' in this quiz: the ids are q01 to q22."
    answers = {f"answer_{q}": "a" for q in ANSWERS}
    answers.update(answer_q01=None, answer_q02="x")
    assert quizcheck.what_is_left(answers) == ("quiz: not finished\n  not answered yet: q01\n  not one of a-d: q02\n"
                                               "  (the check under each question says more)")


# --------------------------------------------------------------------------
# grading a counted quiz


def test_grading_a_counted_quiz_scores_the_hidden_key(counted, tmp_path, monkeypatch):
    key = shown_key(None)
    score, most, graded = grade(tmp_path, monkeypatch, counted, key, "any secret")
    assert (score, most) == (len(ANSWERS), len(ANSWERS)) and not graded.error
    wrongs = {"q03": wrong(key["q03"]), "q07": wrong(key["q07"]), "q11": "X"}
    score, most, graded = grade(tmp_path, monkeypatch, counted, {**key, **wrongs}, "any secret")
    assert (score, most) == (len(ANSWERS) - 3, len(ANSWERS))
    failed = {c.name.split(":")[0] for c in graded.checks if not c.passed}
    assert failed == set(wrongs)
    score, _, _ = grade(tmp_path, monkeypatch, counted, {q: wrong(a) for q, a in key.items()}, "any secret")
    assert score == 0


# --------------------------------------------------------------------------
# the option order of a course


def test_shuffled_orders_differ_between_secrets_and_follow_them(shuffled):
    one, two = (quiz.option_orders(ANSWERS, s) for s in SECRETS)
    assert sum(one[q] != two[q] for q in ANSWERS) >= len(ANSWERS) // 2
    assert any(order != quiz.OPTIONS for order in one.values())
    assert all(sorted(order) == list(quiz.OPTIONS) for order in [*one.values(), *two.values()])
    canonical = quiz.read_questions(read(SOURCE / "quiz.ipynb"))
    for secret, release in shuffled.items():
        nb = read(release / "quiz.ipynb")
        assert quiz.build_record(nb) == {"mode": "counted", "options": quiz.SHUFFLED}
        shown = quiz.read_questions(nb)
        for q, order in quiz.option_orders(ANSWERS, secret).items():
            assert [shown[q].options[letter] for letter in quiz.OPTIONS] == [canonical[q].options[c] for c in order]
            assert shown[q].text == canonical[q].text
        for path, parts in every_text(release).items():
            assert not any(secret in t for t in parts), path  # the secret is never written into the release
        assert quizrelease.key_leaks(release) == []


def test_the_grader_scores_each_shuffled_course_against_its_own_order(shuffled, tmp_path, monkeypatch):
    for secret, release in shuffled.items():
        key = shown_key(secret)
        assert key != shown_key(None)
        score, most, graded = grade(tmp_path, monkeypatch, release, key, secret)
        assert (score, most) == (len(ANSWERS), len(ANSWERS)), [c.outputs for c in graded.checks if not c.passed]
        answers = {**key, "q05": wrong(key["q05"])}
        score, _, graded = grade(tmp_path, monkeypatch, release, answers, secret)
        assert score == len(ANSWERS) - 1
        failure = next(c for c in graded.checks if not c.passed)
        assert f"Expected: {key['q05']}, " in failure.outputs[0]  # the course's own letters
    one, two = SECRETS
    # the letters of the source (or of another course) do not score in this one
    as_written, _, _ = grade(tmp_path, monkeypatch, shuffled[one], shown_key(None), one)
    other, _, _ = grade(tmp_path, monkeypatch, shuffled[one], shown_key(two), one)
    assert as_written < len(ANSWERS) and other < len(ANSWERS)
    # graded with another secret than it was built with, the class is scored against the wrong order
    mismatched, _, _ = grade(tmp_path, monkeypatch, shuffled[one], shown_key(one), two)
    assert mismatched < len(ANSWERS)


def test_a_shuffled_quiz_graded_without_a_secret_gets_no_score(shuffled, tmp_path, monkeypatch):
    secret = SECRETS[0]
    _, _, graded = grade(tmp_path, monkeypatch, shuffled[secret], shown_key(secret), "")
    assert graded.checks and all(c.internal_error for c in graded.checks)
    assert "secret" in graded.checks[0].outputs[0]


def test_a_shuffled_build_needs_the_secret(tmp_path):
    with pytest.raises(RuntimeError, match="AUTOGRADER_SECRET"):
        build(tmp_path / "course", mode="counted", shuffle=True, secret=None)


def test_shuffled_answer_keys_name_the_courses_letters():
    secret = SECRETS[1]
    with environment(AUTOGRADER_SECRET=secret):
        build_ = quizrelease.QuizRelease(mode="self-check", shuffle=True)
        nb = rel.solution_notebook(SOURCE / "quiz.ipynb", build_)
        helper = quizrelease.helper_module(rel.helper_text(SOURCE, "quizcheck.py", build_))
    key = shown_key(secret)
    sources = "\n".join(c.source for c in nb.cells)
    for q, letter in key.items():
        assert f'answer_{q} = "{letter}"' in sources
        assert helper._is_right(q, letter) and not helper._is_right(q, wrong(letter))
        canonical = quiz.canonical_letter(letter, quiz.option_order(secret, q))
        assert helper.EXPLANATIONS[q][letter] == EXPLANATIONS[q][canonical]
    assert quiz.build_record(nb) == {"mode": "self-check", "options": quiz.SHUFFLED}


# --------------------------------------------------------------------------
# the quiz's feedback


def test_feedback_quotes_the_question_the_option_chosen_and_the_right_one(counted, tmp_path, monkeypatch):
    questions = quiz.read_questions(read(counted / "quiz.ipynb"))
    key = shown_key(None)
    answers = {**key, "q03": wrong(key["q03"]), "q04": None}
    _, _, graded = grade(tmp_path, monkeypatch, counted, answers, "s")
    checks = {c.name.split(":")[0]: c for c in graded.checks}
    q01 = checks["q01"]
    assert q01.name == f"q01: {questions['q01'].title()}" and q01.passed
    assert q01.to_gradescope()["output"] == (
        f"Question 1: {questions['q01'].short(240)}\nYour answer: c, \"{questions['q01'].option('c')}\": right. "
        f"{EXPLANATIONS['q01']['c']}")
    q03 = checks["q03"]
    chosen, right = wrong(key["q03"]), key["q03"]
    assert q03.outputs[0].splitlines() == [
        f"Checked: answer_q03, question 3: {questions['q03'].short(240)}",
        f"Expected: {right}, \"{questions['q03'].option(right)}\"",
        f"Got: {chosen}, \"{questions['q03'].option(chosen)}\"",
        f"Likely mistake: {EXPLANATIONS['q03'][chosen]}",
        f"Why {right} is right: {EXPLANATIONS['q03'][right]}"]
    assert q03.hint == EXPLANATIONS["q03"][chosen]
    assert "Got: no answer (None)" in checks["q04"].outputs[0]
    from autograder.reports.feedback import feedback_html

    page = feedback_html(graded)
    assert "Your answer: c, " in page and "Why b is right: " in page
    assert json.dumps(graded.checks[0].to_gradescope())  # plain data


def test_a_note_belongs_to_the_submission_it_was_written_for(tmp_path):
    """A grading worker's checks serve every submission it grades: a right answer's note is in that
    submission's feedback once, never in the next one's (five submissions, so that workers grade several)."""
    import subprocess
    import sys

    key = shown_key(None)
    for n in range(5):
        answers = key if n % 2 == 0 else {q: wrong(a) for q, a in key.items()}
        (tmp_path / f"s{n}.py").write_text("".join(f"answer_{q} = {a!r}\n" for q, a in answers.items()))
    run = subprocess.run([sys.executable, "-m", "autograder", "grade", *sorted(map(str, tmp_path.glob("s*.py"))),
                          "--out", str(tmp_path / "out"), "--parts", "quiz", "--jobs", "1", "--secret", "s", "--quiet"],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    for n in range(5):
        tests = json.loads((tmp_path / "out" / f"s{n}" / "results.json").read_text())["tests"]
        notes = [t["output"].count("Your answer: ") for t in tests]
        assert notes == ([1] * len(key) if n % 2 == 0 else [0] * len(key)), (n, notes)
