"""The LMS files leave out what the total leaves out (issue 59): a part grades.csv reports apart
(`not_in_total`) or the gradebook gives 0 points gets no Moodle column of its own, whichever file the scores
come from, and the export says so."""

from __future__ import annotations

import pytest

from autograder import assignment
from autograder.model.results import CheckResult, Counting, GradedSubmission
from autograder.reports import lms
from autograder.reports.table import grades_csv

ROSTER = "id,username\nada,ada\nben,ben\n"


def class_csv(tmp_path, counting: Counting):
    """grades.csv of two students, one point per part, as a run counting `counting` writes it."""
    graded = [GradedSubmission(sid, [CheckResult(p, "all", 1.0, passed=sid == "ada" or p != "quiz")
                                     for p in assignment.PART_NAMES], counting=counting) for sid in ("ada", "ben")]
    path = tmp_path / "grades.csv"
    path.write_text(grades_csv(graded))
    (tmp_path / "roster.csv").write_text(ROSTER)
    return lms.scores_from_grades_csv(path), lms.read_roster(tmp_path / "roster.csv")


def test_a_part_left_out_of_the_total_gets_no_moodle_column(tmp_path):
    scores, roster = class_csv(tmp_path, Counting(uncounted=frozenset({"quiz"})))
    assert scores.uncounted == ("quiz",) and "quiz" not in scores.counted_parts
    made, _ = lms.exports(scores, roster, canvas=False, moodle=True, name="attention", per_part=True,
                          moodle_out_of=None)
    header = made[0].text.splitlines()[0].split(",")
    counted = len(assignment.PART_NAMES) - 1
    assert header == ["Username", "attention", *(f"attention: {p}" for p in scores.counted_parts)]
    assert made[0].text.splitlines()[1:] == [f"ada,{counted},{','.join(['1'] * counted)}",
                                             f"ben,{counted},{','.join(['1'] * counted)}"]
    assert any("quiz is not counted in the total" in w for w in made[0].warnings)


def test_a_counted_quiz_keeps_its_column(tmp_path):
    scores, roster = class_csv(tmp_path, Counting(held_back=frozenset({"quiz"})))
    made, _ = lms.exports(scores, roster, canvas=False, moodle=True, name="attention", per_part=True,
                          moodle_out_of=None)
    assert made[0].text.splitlines()[0].endswith(",attention: quiz") and not scores.uncounted
    assert not any("not counted" in w for w in made[0].warnings)


def test_rows_that_leave_out_different_parts_are_refused(tmp_path):
    class_csv(tmp_path, Counting(uncounted=frozenset({"quiz"})))
    path = tmp_path / "grades.csv"
    lines = path.read_text().splitlines()
    lines[2] = lines[2].replace(",quiz,", ",,")
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(lms.ExportError, match="leave different parts out"):
        lms.scores_from_grades_csv(path)
