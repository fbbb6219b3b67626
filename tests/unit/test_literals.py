"""Cells that only assign literals are read, not run; whatever they cannot answer goes to a sandbox loaded
with the same cells."""

from __future__ import annotations

from autograder.isolation import protocol, wire
from autograder.isolation.limits import Limits
from autograder.isolation.literals import LiteralChannel, literal_values
from autograder.isolation.proxy import Clock, Student, StudentError

QUIZ = [("quiz.ipynb, cell setup", "# Run this cell first\nimport quizcheck"),
        ("quiz.ipynb, cell quiz-q01", 'answer_q01 = None  # replace None\nanswer_q01 = "c"'),
        ("quiz.ipynb, cell quiz-q02", '"""a note"""\nanswer_q02 = ("a", 2.5, -1, b"x", [True, {"k": None}])')]


def test_the_last_literal_of_each_name():
    assert literal_values(QUIZ, {"quizcheck"}) == {"answer_q01": "c", "answer_q02": ("a", 2.5, -1, b"x", [True, {"k": None}])}


def test_anything_that_runs_code_is_not_read():
    for code in ('answer_q01 = "c".upper()', "import os", "import quizcheck as q", "import quizcheck.sub",
                 "from quizcheck import check", 'answer_q01: str = "c"', 'a, b = "a", "b"', "print(1)",
                 'answer_q01 = f"{1}"', "def f(): pass", "x = [1] * 3", "quizcheck = 1\nimport quizcheck",
                 "answer = ((((", "x = " + "[" * 300 + "]" * 300):
        assert literal_values([("cell", code)], {"quizcheck"}) is None, code
    assert literal_values(QUIZ, set()) is None  # its import is not one every sandbox has made


class Recording:
    """A stand-in sandbox: the requests it got, and a server's answer to each."""

    def __init__(self) -> None:
        self.got: list[dict] = []
        self.closed = False
        self.last_work_seconds, self.last_held = 0.01, None

    def __call__(self, request: bytes, seconds: float, on_callback, warmup: bytes | None = None) -> bytes:
        decoded = wire.decode(request)
        self.got.append(decoded)
        if decoded["op"] == protocol.LOAD:
            return wire.encode(protocol.ok([]))
        if decoded["op"] == protocol.GET and decoded["target"] == "quizcheck":
            return wire.encode(protocol.ok(wire.Opaque("module", "")))
        if decoded["op"] == protocol.GET and decoded["target"] == "answer_q01":
            return wire.encode(protocol.ok("c"))
        return wire.encode(protocol.error(protocol.MISSING, f"name {decoded['target']!r} is not defined", "NameError"))

    def close(self) -> None:
        self.closed = True


def _student(values: dict) -> tuple[Student, list[Recording]]:
    opened: list[Recording] = []

    def open_channel():
        opened.append(Recording())
        return opened[-1], opened[-1].close

    channel = LiteralChannel(values, open_channel)
    student = Student(channel, Clock(Limits(call_seconds=10, budget_seconds=100)), channel.close)
    student.load(QUIZ)
    return student, opened


def test_answers_read_without_a_sandbox():
    student, opened = _student(literal_values(QUIZ, {"quizcheck"}))
    assert student.get("answer_q01") == "c" and student.get("answer_q02")[0] == "a"
    student.close()
    assert opened == [] and student.load_errors == []


def test_what_it_cannot_answer_goes_to_a_sandbox_loaded_with_the_same_cells():
    student, opened = _student(literal_values(QUIZ, {"quizcheck"}))
    try:
        student.get("answer_q03")
    except StudentError as exc:
        assert exc.kind == protocol.MISSING
    else:
        raise AssertionError("a name the cells do not assign was answered")
    assert len(opened) == 1
    assert [r["op"] for r in opened[0].got] == [protocol.LOAD, protocol.SERVE, protocol.GET]
    assert opened[0].got[0]["cells"] == [list(c) for c in QUIZ]
    assert student.get("quizcheck").type_name == "module"  # the sandbox's answer, from the one opened
    assert student.get("answer_q01") == "c" and len(opened) == 1 and len(opened[0].got) == 5  # now all go there
    student.close()
    assert opened[0].closed


def test_where_the_release_cannot_be_read_no_import_counts_as_made(monkeypatch):
    from autograder.engine import session

    assert "quizcheck" in session._preloaded()  # the release's setup cells import it
    monkeypatch.setattr(session, "setup_imports", lambda release: (_ for _ in ()).throw(FileNotFoundError("no release")))
    assert session._preloaded() == set()
    assert literal_values(QUIZ, session._preloaded()) is None  # then the quiz is loaded in a sandbox


def test_what_costs_the_grader_more_than_reading_is_left_to_a_sandbox(monkeypatch):
    """Sets and dicts keyed by numbers would be built here (integers that hash alike build in quadratic time),
    so they go to a sandbox; so does a value of more nodes than an answer holds. Strings, bytes, numbers,
    None, lists, tuples and dicts with string keys are read, nested or not, without recursion."""
    monkeypatch.setattr("ast.literal_eval", lambda *a: (_ for _ in ()).throw(AssertionError("evaluated")))
    colliding = "{" + ", ".join(str(k * (2**61 - 1)) for k in range(1, 50)) + "}"
    for code in (f"answer_q01 = {colliding}", "answer_q01 = {1: 'a'}", "answer_q01 = {**x}",
                 "answer_q01 = [" + ", ".join(["1"] * 2000) + "]"):
        assert literal_values([("cell", code)], set()) is None, code[:40]
    nested = "answer_q01 = " + "[" * 90 + "]" * 90
    assert literal_values([("cell", nested)], set())["answer_q01"] == eval(nested.split(" = ")[1])
    value = '[1, (2, [3, "x"], ()), {"k": (b"y", -2.5, None)}, {}, ([],)]'
    assert literal_values([("cell", f"answer_q01 = {value}")], set()) == {"answer_q01": eval(value)}
    assert type(literal_values([("cell", "answer_q01 = ((1,),)")], set())["answer_q01"][0]) is tuple


def test_cells_larger_than_a_quiz_are_not_parsed(monkeypatch):
    monkeypatch.setattr("ast.parse", lambda *a, **k: (_ for _ in ()).throw(AssertionError("parsed")))
    assert literal_values([("cell", "answer_q01 = 'c'\n" + "x = 1\n" * 20_000)], set()) is None
