"""The release's own prose in a student's part is found once per text: a part is in as many shown
pairs as it is alike to, and copies repeat it."""

from __future__ import annotations

from autograder import releases
from autograder.reports import similarity


def test_the_release_prose_of_a_text_is_found_once(monkeypatch):
    prose = sorted(similarity.release_prose(releases.grader_release()), key=len)[-1]  # the longest: a docstring or a signature line
    text = f"{prose}\nx = compute(1)\n"
    lexed = []
    tokens = similarity._tokens
    monkeypatch.setattr(similarity, "_tokens", lambda t: lexed.append(t) or tokens(t))
    similarity._release_prose_in.cache_clear()
    spans = [(0, len(text))]
    first = similarity._students_own(text, spans, releases.grader_release())
    assert similarity._students_own(text, spans, releases.grader_release()) == first
    assert lexed == [text]
    assert "".join(text[a:b] for a, b in first) == "x = compute(1)"  # the release's prose is cut either way


def test_a_part_full_of_the_releases_lines_costs_its_length_not_its_square():
    """A student's code may hold a release comment tens of thousands of times (the similarity runs in the
    grader's own process, for the whole class): the lines are cut out in one pass. Quadratic, 20,000 lines
    took minutes; the bound below is a hundred times what one pass takes on a busy machine."""
    import time

    comment = min((p for p in similarity.release_prose(releases.grader_release()) if p.startswith("#")), key=len)
    text = "x = compute(1)\n" + "\n".join([comment] * 20_000) + "\ny = x\n"
    similarity._release_prose_in.cache_clear()
    started = time.process_time()
    kept = similarity._students_own(text, [(0, len(text))], releases.grader_release())
    assert time.process_time() - started < 30
    assert [text[a:b] for a, b in kept] == ["x = compute(1)", "y = x"]
