"""Whether a grading run counts the quiz, from the command line or the course's nbgrader_config.py: read
without importing nbgrader where the file holds plain literals (every grading run and every quiz grade cell
under `nbgrader autograde` asks), through traitlets where it does not."""

from __future__ import annotations

from pathlib import Path

from .. import quiz


def quiz_counting(flag: bool | None, course_root: Path) -> quiz.QuizCounting:
    """Whether the quiz counts: `flag` (--quiz-counts / --no-quiz-counts) when given; else the course's
    nbgrader_config.py in `course_root` (QuizRelease.counts, or its mode: a counted quiz counts); else the
    mode recorded in the grader's copy of the release."""
    mode, counts, source = _course_settings(course_root)
    if flag is not None:
        return quiz.QuizCounting(flag, mode, "--quiz-counts" if flag else "--no-quiz-counts")
    return quiz.QuizCounting(quiz.counts_in_mode(mode, counts), mode, source)


def _course_settings(course_root: Path) -> tuple[str, bool | None, str]:
    """(the quiz's mode, QuizRelease.counts or None, where they were read): the course's configuration,
    else the grader's release."""
    try:
        text = (course_root / quiz.COURSE_CONFIG).read_text(encoding="utf-8")
    except (OSError, ValueError):
        return quiz.released_mode(), None, "the mode of the grader's release"
    found = quiz.quiz_settings(text)
    if found is None:  # not plain literals: what traitlets makes of the file (imports nbgrader)
        try:
            from .quizrelease import settings

            release = settings(course_root)
            found = {"mode": release.mode, "counts": release.counts}
        except Exception as exc:  # noqa: BLE001 - the instructor's file: say that it could not be read, go on
            return quiz.released_mode(), None, f"{quiz.COURSE_CONFIG} could not be read ({type(exc).__name__}), the release's mode"
    mode = found.get("mode", quiz.DEFAULT_MODE)
    mode = mode if mode in quiz.MODES else quiz.DEFAULT_MODE
    if found.get("counts") is not None:
        counts = bool(found["counts"])
        return mode, counts, f"{quiz.COURSE_CONFIG}: c.QuizRelease.counts = {counts}"
    return mode, None, f"{quiz.COURSE_CONFIG}: c.QuizRelease.mode = {mode!r}"
