"""The service's durable state: every inbound folder it has seen, once, and what became of it, in SQLite.

A restart loses no submission and grades none twice. Each folder of inbound/ is recorded under its name (a
unique key) the first time a scan sees it, and moves through the states

    queued -> grading -> graded | failed          (waiting: over the attempts limit, "wait")
    queued -> waiting -> grading -> ...           (refused: named for someone else, or over the limit, "refuse")

A grade is stored in the same transaction that marks it graded, and only on a row still 'grading': a row
found 'grading' when the service starts was being graded when it stopped, with no result stored, and is
graded again; a graded row is never taken again. Folders submitted while the service was down are simply
new to the next scan.

A graded attempt is counted when its grading starts; one that failed (the grader could not grade it) gives
the attempt back.

Fair per student: a batch takes at most one submission of each student, the students in the order of their
oldest pending submission, and none of a student who has a submission in another batch still being graded
(`exclude`), so a flood from one student delays only that student's own later submissions.

A batch is graded in a process of its own (runner.py). One that ends without an answer (killed, crashed) leaves
its rows 'grading', to be taken again; `died` counts it, and a row whose batch died `MAX_DEATHS` times is failed
with why, never taken again.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Collection, Iterable, Iterator

from ..api import GradedSubmission
from .config import Policy
from .exchange import Found
from .policy import Seen, limit_message, over_limit, period_start

STATES = ("queued", "waiting", "grading", "graded", "refused", "failed")
DATABASE = "queue.sqlite3"
MAX_DEATHS = 3  # batches of a submission that ended without an answer before it is failed
DIED = ("The grader stopped {n} times while grading this submission, so it is not graded again; the course's "
        "staff have been told.")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,           -- the inbound folder's name
    student TEXT NOT NULL,
    owner TEXT NOT NULL,
    verified INTEGER NOT NULL,          -- 1: the folder's owner is the student
    impostor INTEGER NOT NULL DEFAULT 0,-- 1: refused because it is named for someone else
    submitted TEXT NOT NULL,            -- nbgrader's timestamp, UTC ISO 8601
    found TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ({", ".join(repr(s) for s in STATES)})),
    message TEXT NOT NULL DEFAULT '',
    admitted TEXT,                      -- when it took a graded attempt (went to 'grading')
    finished TEXT,
    result TEXT,                        -- GradedSubmission.to_json(), with the state that stores it
    targets TEXT NOT NULL DEFAULT '[]', -- the nbgrader feedback files it has (their hashes), once known
    shown TEXT NOT NULL DEFAULT '',     -- the view its nbgrader feedback file was last written for
    deaths INTEGER NOT NULL DEFAULT 0   -- batches of it that ended without an answer
);
CREATE INDEX IF NOT EXISTS by_state ON submissions (state, submitted, id);
CREATE INDEX IF NOT EXISTS by_student ON submissions (student, admitted);
"""


@dataclass(frozen=True)
class Row:
    """One recorded submission."""

    id: int
    key: str
    student: str
    owner: str
    verified: bool
    impostor: bool
    submitted: datetime
    found: datetime
    state: str
    message: str
    admitted: datetime | None
    finished: datetime | None
    result: GradedSubmission | None
    targets: list[str]
    shown: str

    def seen(self) -> Seen:
        return Seen(self.id, self.student, self.submitted, self.state, self.message, self.result, self.verified)


class Queue:
    """The SQLite database in the service's `state` folder; a connection per use, so the page's handlers and
    the grading loop may use it from different threads."""

    def __init__(self, state: Path) -> None:
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = state / DATABASE
        with self._connect() as db:
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            if "deaths" not in {column for (_, column, *_) in db.execute("PRAGMA table_info(submissions)")}:
                db.execute("ALTER TABLE submissions ADD COLUMN deaths INTEGER NOT NULL DEFAULT 0")  # an older state

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA foreign_keys=ON")
            yield db
        finally:
            db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # ---- recording

    def keys(self) -> set[str]:
        with self._connect() as db:
            return {key for (key,) in db.execute("SELECT key FROM submissions")}

    def record(self, found: Iterable[Found], now: datetime) -> int:
        """Records each folder not yet known (refused ones as refused); returns how many were new."""
        new = 0
        with self._transaction() as db:
            for f in found:
                state = "refused" if f.refused else "queued"
                cursor = db.execute(
                    "INSERT OR IGNORE INTO submissions (key, student, owner, verified, impostor, submitted, found, "
                    "state, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (f.key, f.student, f.owner, int(f.verified), int(bool(f.refused)), _iso(f.submitted), _iso(now),
                     state, f.refused))
                new += cursor.rowcount
        return new

    # ---- the next batch

    def leftover(self) -> list[Row]:
        """Rows left 'grading' (the service stopped while grading them): to grade again."""
        return self._rows("WHERE state = 'grading' ORDER BY submitted, id", ())

    def waiting_students(self, exclude: Collection[str] = ()) -> int:
        """How many students have a submission to grade (queued, waiting, or left 'grading'), not counting those in
        `exclude`."""
        with self._connect() as db:
            found = {s for (s,) in db.execute("SELECT DISTINCT student FROM submissions WHERE state IN ('queued', "
                                              "'waiting', 'grading')")}
        return len(found - set(exclude))

    def next_batch(self, policy: Policy, now: datetime, size: int, exclude: Collection[str] = ()) -> list[Row]:
        """Up to `size` submissions to grade now, at most one per student, oldest first, none of the students in
        `exclude` (those with a submission in a batch still being graded); marked 'grading' (and counted as an
        attempt) in the same transaction. Rows left 'grading' by a stop or a batch that died come first (already
        counted), then the pending, each student's oldest, for the students not in the batch yet. Rows over the
        attempts limit wait or are refused here, with the message the student reads."""
        with self._transaction() as db:
            taken: list[int] = []
            students: set[str] = set(exclude)
            for row_id, student in db.execute("SELECT id, student FROM submissions WHERE state = 'grading' "
                                              "ORDER BY submitted, id").fetchall():
                if student not in students and len(taken) < size:
                    taken.append(row_id)
                    students.add(student)
            start = _iso(period_start(policy.period, now))
            used: dict[str, int] = {}
            pending = db.execute("SELECT id, student, state, message FROM submissions WHERE state IN ('queued', "
                                 "'waiting') ORDER BY submitted, id").fetchall()
            for row_id, student, state, said in pending:
                if len(taken) >= size:
                    break
                if student in students:
                    continue  # one per student per batch: the rest wait their turn, in order
                if student not in used:
                    (used[student],) = db.execute("SELECT count(*) FROM submissions WHERE student = ? AND admitted "
                                                  "IS NOT NULL AND admitted >= ? AND state != 'failed'", (student, start)).fetchone()
                if over_limit(policy, used[student]):
                    message = limit_message(policy, now)
                    new_state = "waiting" if policy.over_limit == "wait" and policy.period != "total" else "refused"
                    if (state, said) != (new_state, message):
                        db.execute("UPDATE submissions SET state = ?, message = ? WHERE id = ?",
                                   (new_state, message, row_id))
                    if new_state == "waiting":
                        students.add(student)  # its later submissions wait behind it
                    continue
                db.execute("UPDATE submissions SET state = 'grading', message = '', admitted = ? WHERE id = ?",
                           (_iso(now), row_id))
                taken.append(row_id)
                students.add(student)
                used[student] += 1
            return self._rows_in(db, taken)

    # ---- results

    def finish(self, row_id: int, result: GradedSubmission, now: datetime) -> bool:
        """Stores a grade and its state in one transaction, only on a row still 'grading': False if it was not
        (then nothing is stored: it was graded already)."""
        state = "failed" if result.error or any(c.internal_error for c in result.checks) else "graded"
        message = "" if state == "graded" else "The grader could not grade this submission; the course's staff " \
                                               "have been told."
        with self._transaction() as db:
            cursor = db.execute("UPDATE submissions SET state = ?, message = ?, result = ?, finished = ?, shown = '' "
                                "WHERE id = ? AND state = 'grading'",
                                (state, message, json.dumps(result.to_json()), _iso(now), row_id))
            return cursor.rowcount == 1

    def fail(self, row_id: int, message: str, now: datetime) -> None:
        """A submission that cannot be graded at all (its folder unreadable, say): failed, with why."""
        with self._transaction() as db:
            db.execute("UPDATE submissions SET state = 'failed', message = ?, finished = ?, shown = '' "
                       "WHERE id = ? AND state = 'grading'", (message, _iso(now), row_id))

    def died(self, row_ids: Iterable[int], now: datetime) -> list[int]:
        """The batch grading `row_ids` ended without an answer: each stays 'grading', to be taken again, unless
        its batches died `MAX_DEATHS` times; then it is failed, with why. Returns the ids failed."""
        failed = []
        with self._transaction() as db:
            for row_id in row_ids:
                found = db.execute("UPDATE submissions SET deaths = deaths + 1 WHERE id = ? AND state = 'grading' "
                                   "RETURNING deaths", (row_id,)).fetchone()
                if found and found[0] >= MAX_DEATHS:
                    db.execute("UPDATE submissions SET state = 'failed', message = ?, finished = ?, shown = '' "
                               "WHERE id = ?", (DIED.format(n=found[0]), _iso(now), row_id))
                    failed.append(row_id)
        return failed

    def set_targets(self, row_id: int, targets: list[str]) -> None:
        """The nbgrader feedback files of a submission (feedback.targets), kept so that writing them again (the
        due date passed) needs no read of its folder."""
        with self._transaction() as db:
            db.execute("UPDATE submissions SET targets = ? WHERE id = ?", (json.dumps(targets), row_id))

    def mark_shown(self, row_id: int, view: str) -> None:
        with self._transaction() as db:
            db.execute("UPDATE submissions SET shown = ? WHERE id = ?", (view, row_id))

    # ---- reading

    def rows(self, student: str | None = None) -> list[Row]:
        """Every row (a student's only, when given), oldest first."""
        if student is None:
            return self._rows("ORDER BY submitted, id", ())
        return self._rows("WHERE student = ? ORDER BY submitted, id", (student,))

    def row(self, row_id: int) -> Row | None:
        found = self._rows("WHERE id = ?", (row_id,))
        return found[0] if found else None

    def unshown(self, view: str) -> list[Row]:
        """The rows whose nbgrader feedback file is not written yet for `view` and their state (`mark_shown`):
        graded, failed, waiting or refused for the limit; never one refused as someone else's."""
        return self._rows("WHERE impostor = 0 AND state IN ('graded', 'failed', 'waiting', 'refused') "
                          "AND shown != ? || '/' || state ORDER BY submitted, id", (view,))

    def _rows(self, where: str, args: tuple) -> list[Row]:
        with self._connect() as db:
            return [_row(r) for r in db.execute(f"SELECT {_COLUMNS} FROM submissions {where}", args)]

    def _rows_in(self, db: sqlite3.Connection, ids: list[int]) -> list[Row]:
        if not ids:
            return []
        marks = ", ".join("?" for _ in ids)
        found = {r[0]: _row(r) for r in db.execute(f"SELECT {_COLUMNS} FROM submissions WHERE id IN ({marks})", ids)}
        return [found[i] for i in ids]


_COLUMNS = ("id, key, student, owner, verified, impostor, submitted, found, state, message, admitted, finished, "
            "result, targets, shown")


def _row(r: tuple) -> Row:
    result = GradedSubmission.from_json(json.loads(r[12])) if r[12] else None
    return Row(r[0], r[1], r[2], r[3], bool(r[4]), bool(r[5]), _time(r[6]), _time(r[7]), r[8], r[9],
               _time(r[10]) if r[10] else None, _time(r[11]) if r[11] else None, result, list(json.loads(r[13])), r[14])


def _iso(moment: datetime) -> str:
    """UTC, fixed width, so that text order is time order in SQL."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f+00:00")


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)
