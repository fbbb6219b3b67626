"""The release's own prose in a student's part is found once per text: a part is in as many shown
pairs as it is alike to, and copies repeat it."""

from __future__ import annotations

from autograder.reports import similarity


def test_the_release_prose_of_a_text_is_found_once(monkeypatch):
    prose = sorted(similarity.release_prose(), key=len)[-1]  # the longest: a docstring or a signature line
    text = f"{prose}\nx = compute(1)\n"
    lexed = []
    tokens = similarity._tokens
    monkeypatch.setattr(similarity, "_tokens", lambda t: lexed.append(t) or tokens(t))
    similarity._release_prose_in.cache_clear()
    spans = [(0, len(text))]
    first = similarity._students_own(text, spans)
    assert similarity._students_own(text, spans) == first
    assert lexed == [text]
    assert "".join(text[a:b] for a, b in first) == "x = compute(1)"  # the release's prose is cut either way
