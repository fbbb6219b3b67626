"""The nbgrader exchange as the service sees it: the new submissions in `<exchange>/<course>/inbound/`, who made
each, and their notebooks read within bounds.

`nbgrader submit` names its folder `<student>+<assignment>+<timestamp>[+<random>]`, but anyone who can write
to inbound/ can make such a folder, and nbgrader leaves each one writable by all (submit.py's chmod 0777).
So the name alone proves nothing where the exchange is shared by Unix accounts: the folder's owner (st_uid)
decides, and a folder named for another user than its owner is refused, recorded, and never graded as the
named student. Each notebook read from it must belong to that owner too (a file slipped into someone else's
folder is refused). Where every student's folder belongs to one account (one shared account, as in
JupyterHub's Docker images, where nbgrader's own `get_username` reads `jovyan` as JUPYTERHUB_USER; or the
service's own account), the name is all there is: it is used, and marked unverified for the pages to say.

Nothing here follows a link or reads more than its bounds before parsing: inbound/ is listed up to
MAX_INBOUND entries, names are bounded, notebooks are read as every submission file is
(`model.submission.read_regular`: size, JSON values, no link, regular files only).
"""

from __future__ import annotations

import os
import pwd
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..model.submission import MAX_FILES, MAX_NAME_CHARS, MAX_NOTEBOOK_BYTES, read_regular

MAX_INBOUND = 200_000  # entries of inbound/ looked at per scan: every submission of a large course, many times over
MAX_SMALL_BYTES = 1024  # submission_secret.txt (128 hex digits) and timestamp.txt
SHARED_ACCOUNTS = ("jovyan",)  # nbgrader.utils.get_username: this account's files are any hub user's


@dataclass(frozen=True)
class Found:
    """One folder of inbound/ for the assignment: whose it says it is, whose it is, and whether to grade it."""

    key: str  # the folder's name: unique in inbound/, the queue's key
    student: str  # the student the name says
    submitted: datetime  # nbgrader's timestamp, in UTC
    owner: str  # the account that owns the folder (a name, or "uid N")
    verified: bool  # the owner is the named student (False: one shared account, the name taken as it is)
    refused: str = ""  # why it must never be graded as `student` ("" : it may be)


@dataclass(frozen=True)
class Notebooks:
    """What grading and the feedback need of a submission folder, read within bounds."""

    files: dict[str, bytes]  # notebook file name -> its bytes
    secret: str  # submission_secret.txt ("" where nbgrader wrote none: feedback then takes the legacy hash)
    timestamp: str  # timestamp.txt, or the folder name's


class ExchangeError(RuntimeError):
    """inbound/ is there but cannot be listed: the service's account lacks read on it (docs/service.md)."""


def inbound(exchange: Path, course: str) -> Path:
    return exchange / course / "inbound"


def scan(exchange: Path, course: str, assignment: str, seen: set[str] | None = None) -> list[Found]:
    """The folders of inbound/ for `assignment` not in `seen`, each with its identity decided. A folder whose
    name nbgrader could not have made (another assignment, no timestamp) is not this service's and is left."""
    folder = inbound(exchange, course)
    try:
        listing = os.scandir(folder)
    except FileNotFoundError:
        return []  # no inbound/ yet: nothing submitted
    except OSError as exc:
        raise ExchangeError(f"{folder}: cannot list it ({exc.strerror or exc}); the service's account needs to "
                            "read it (nbgrader's c.CourseDirectory.groupshared, docs/service.md)") from None
    found = []
    with listing:
        for number, entry in enumerate(listing):
            if number >= MAX_INBOUND:
                break
            if (seen is not None and entry.name in seen) or len(entry.name) > MAX_NAME_CHARS:
                continue
            named = _named(entry.name, assignment)
            if named is None:
                continue
            student, submitted = named
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found.append(_identity(entry.name, student, submitted, info))
    return sorted(found, key=lambda f: (f.submitted, f.key))


def _named(name: str, assignment: str) -> tuple[str, datetime] | None:
    """(student, timestamp in UTC) of an nbgrader inbound name for `assignment`, or None."""
    parts = name.split("+")
    if len(parts) not in (3, 4) or parts[1] != assignment or not parts[0] or parts[0].startswith("."):
        return None
    submitted = parse_timestamp(parts[2])
    return None if submitted is None else (parts[0], submitted)


def parse_timestamp(text: str) -> datetime | None:
    """nbgrader's timestamp (its `parse_utc`: naive UTC) as an aware UTC time, or None."""
    from nbgrader.utils import parse_utc  # nbgrader's own reading of its own format

    try:
        parsed = parse_utc(text[:100])
    except (ValueError, OverflowError, TypeError):
        return None
    return parsed.replace(tzinfo=timezone.utc) if isinstance(parsed, datetime) else None


def _identity(key: str, student: str, submitted: datetime, info: os.stat_result) -> Found:
    owner = account(info.st_uid)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return Found(key, student, submitted, owner, False, "not a folder (a link or a file): not read")
    if owner == student:
        return Found(key, student, submitted, owner, True)
    if shared_owner(info.st_uid):
        return Found(key, student, submitted, owner, False)
    return Found(key, student, submitted, owner, False,
                 f"named for {student} but made by {owner}: refused, not graded as {student}")


def account(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def shared_owner(uid: int) -> bool:
    """Whether folders of this account may be anyone's: the service's own account (one account for everything)
    or JupyterHub's shared `jovyan`."""
    return uid == os.geteuid() or account(uid) in SHARED_ACCOUNTS


def read(exchange: Path, course: str, key: str) -> Notebooks | str:
    """The notebooks (top level, `*.ipynb`) of submission `key`, each owned by the folder's owner (or a shared
    account), with nbgrader's secret and timestamp; or why they cannot be graded."""
    folder = inbound(exchange, course) / key
    try:
        info = os.lstat(folder)
        listing = os.scandir(folder)
    except OSError as exc:
        return f"the folder cannot be read ({exc.strerror or exc})"
    if not stat.S_ISDIR(info.st_mode):
        return "not a folder (a link or a file): not read"
    files: dict[str, bytes] = {}
    small: dict[str, str] = {}
    with listing:
        for number, entry in enumerate(listing):
            if number >= MAX_FILES:
                return f"more than {MAX_FILES} entries: not read"
            name = entry.name
            if name.endswith(".ipynb") and not name.startswith(".") and len(name) <= MAX_NAME_CHARS:
                limit = MAX_NOTEBOOK_BYTES
            elif name in ("submission_secret.txt", "timestamp.txt"):
                limit = MAX_SMALL_BYTES
            else:
                continue
            got = read_regular(folder / name, limit)
            if isinstance(got, str):
                return f"{name} {got}"
            data, file_info = got
            if file_info.st_uid != info.st_uid and not shared_owner(file_info.st_uid):
                return f"{name} was written by {account(file_info.st_uid)}, not by the folder's owner: not read"
            if name.endswith(".ipynb"):
                files[name] = data
            else:
                small[name] = data.decode("utf-8", errors="replace")  # as nbgrader reads it: whole
    if not files:
        return "no notebook in the submission"
    parts = key.split("+")
    return Notebooks(files, small.get("submission_secret.txt", ""), small.get("timestamp.txt", "").strip() or parts[2])
