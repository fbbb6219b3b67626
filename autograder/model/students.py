"""Which students a PATH given to `grade` holds: one (graded as it is), several (one submission each,
as the names say who, and a note for each entry that is no one's row), or a guess (refused, with what
was found and how to pass it).

A folder of several students' work was once read as one submission, built from the newest files of
any of them. Now a folder is split where its top-level names say who each entry belongs to:

* one folder or zip per student (`class/alice/`, `class/bob.zip`): the id is the folder's name or
  the zip's stem; a folder that holds a single such folder is looked into (`downloads/submissions/`).
  A folder or zip named for the assignment or one of its notebooks (`attention/`, `quiz.zip`) is a
  student's own, never a student;
* Canvas's "Download Submissions", unzipped: `name_userid_attachmentid_filename`. Canvas builds
  these in `lib/content_zipper.rb` (instructure/canvas-lms): `get_filename` joins the user's sortable
  name (lower-cased, a `_` dropped only where it stands on both sides of digits, every non-word
  character removed), `LATE` for a late submission and the user id (`anon_<id>` and no name under
  anonymous grading), and `add_upload_submission` appends the attachment's id and its display name,
  which the student chose. The id is the user id (Canvas's `ID`). A name the student may edit can
  still hold `_` and end in `_<digits>`, so a file name may split into name and id at more than one
  `_`: the readings are weighed by what Canvas guarantees (one user's files share their name, LATE
  and id; a download is anonymous or not as a whole). A reading another file contradicts is dropped,
  with a note; a file still read as two users' is a note naming both, never either one's grade;
* Moodle's "Download all submissions" (`mod/assign/classes/downloader.php`, moodle/moodle): the
  prefix is the full name with `_` made a space, then the participant id; flat,
  `Full Name_123_assignsubmission_file_filename`; with "Download submissions in folders" (the default
  since Moodle 3.1), a folder `Full Name_123_assignsubmission_file` per student and plugin (a
  trailing `_` accepted too). The id is `Full Name_123`;
* Blackboard's Grade Centre "Assignment File Download": `Assignment_username_attempt_<time>_filename`
  with `<time>` as `2024-01-01-12-00-00`, and a receipt `Assignment_username_attempt_<time>.txt`
  (github.com/kwurst/bb-file-cleanup, README; github.com/vangef/BBGradebookOrganiser takes the
  student number as the last `_` word before `_attempt_`, as here). The id is that username; of
  several attempts of one student, the latest is graded and a note says so.

The files of one student (Canvas names attention.ipynb and quiz.ipynb apart, with the same user id)
become one submission: they are hard-linked (or, across file systems, copied within the reader's
limits) into a folder of their own under a temporary folder, which `read_submission` reads as
any student's folder, so the local pool and Dask both get them from `batch.plan`.

A name that several styles read (a Canvas upload named `..._attempt_<time>_...`) is read in the style
that reads the most of its folder's entries; an entry that style does not read (a folder beside an
LMS's files, a link, a notebook of no one's) is a note, not graded, and never costs the class. Every
entry ends as a student's row or a note. A folder of a folder per student that also holds notebooks or
modules of its own is refused (`LayoutError`): no LMS named it, and one student's folder or a class
would be a guess. A folder of several modules and no notebook is graded as one student's code, as
before, with a note on how to grade a module per student. Everything is listed within bounds
(`MAX_ENTRIES` names at the top of a folder, `submission.MAX_FILES` entries and `submission.MAX_DEPTH`
levels below each, names of at most `submission.MAX_NAME_CHARS` before any pattern reads them), links
are never followed, and a zip given as a PATH is only looked into (`submission.open_zip`), never
unpacked: one that holds several students is refused with how to unzip it.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable

from .. import assignment
from ..text import printable
from .submission import (MAX_DEPTH, MAX_FILES, MAX_NAME_CHARS, MAX_NOTEBOOK_BYTES, MAX_PY_BYTES, MAX_ZIP_BYTES,
                         S_IFLNK, SubmissionError, open_zip, submission_id)

MAX_ENTRIES = 10_000  # names listed at the top of a class folder: a class of thousands, each with a few files
SHOWN = 8  # names a message lists of each kind before "and N more"
WORK_SUFFIXES = (".ipynb", ".py", ".zip")
SKIPPED_NAMES = ("__MACOSX", "__pycache__")  # and every name that starts with a dot (.ipynb_checkpoints, .DS_Store)
FOLDER, FILE, LINK, OTHER = "folder", "file", "link", "other"
OWN_NAMES = (assignment.ASSIGNMENT, *assignment.NOTEBOOKS)  # a folder or zip so named is a student's, not a student

# What each style of names is called in messages. A name that several styles read is read in the style that
# reads the most of its folder's entries (of as many, the first here: the most particular names first).
STYLES = {"blackboard": "Blackboard download names", "moodle": "Moodle download-all names",
          "canvas": "Canvas bulk-download names", "folder": "a folder or zip per student"}
# Each pattern reads a name of at most MAX_NAME_CHARS in one pass: no quantifier in it can take what the
# next one takes, so none backtracks.
ATTEMPT = re.compile(r"_attempt_([0-9]{4}(?:-[0-9]{2}){5})(?=_.|\.txt\Z)", re.DOTALL)  # searched: Blackboard's
MOODLE_FILE = re.compile(r"([^_]+_[0-9]+)_assignsubmission_[a-z]+_.+", re.DOTALL)  # the name whole
MOODLE_FOLDER = re.compile(r"([^_]+_[0-9]+)_assignsubmission_[a-z]+_?")  # the name whole
CANVAS_IDS = re.compile(r"([0-9]+)_[0-9]+_.", re.DOTALL)  # after a `_` that may end a user's name
CANVAS_ANONYMOUS = re.compile(r"(?:LATE_)?(anon_[A-Za-z0-9]+)_[0-9]+_.", re.DOTALL)  # at the start


class LayoutError(SubmissionError):
    """A PATH whose files cannot be told apart by student: the message lists what was found and how
    to pass it instead."""


@dataclass(frozen=True)
class Entry:
    """A name at the top of a folder (on disk or in a zip), as the split needs it."""

    path: PurePosixPath  # within the PATH
    kind: str  # FOLDER, FILE, LINK (never followed) or OTHER (a pipe, socket or device)
    work: bool  # is, or holds, a notebook, a module or a zip

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def shown(self) -> str:
        return printable(self.name) + ("/" if self.kind == FOLDER else "")


@dataclass(frozen=True)
class Owner:
    """Whose an entry is, as its name says."""

    style: str  # a key of STYLES
    key: str  # the same key, the same student
    id: str  # the submission id (made safe by the caller)
    attempt: str = ""  # Blackboard's attempt time: of several, the latest is graded
    prefix: str = ""  # Canvas's name, LATE and user id: the same in all of one user's files
    anonymous: bool = False  # Canvas's `anon_<id>`: a download is anonymous or not as a whole


@dataclass
class Held:
    """What a PATH holds: each student's (path to read, id), and what a person should know."""

    students: list[tuple[Path, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


Lister = Callable[[PurePosixPath], list[Entry]]  # the entries of a folder within the PATH


def held_by(path: Path, staging: "Staging | None" = None) -> Held:
    """The students `path` holds. Raises LayoutError where which files are whose would be a guess."""
    path = Path(path)
    try:
        info = os.lstat(path)
    except OSError:
        return Held([(path, submission_id(path))])  # read_submission says what is wrong with it
    if stat.S_ISREG(info.st_mode) and path.suffix == ".zip":
        _refuse_class_zip(path)
    if not stat.S_ISDIR(info.st_mode):
        return Held([(path, submission_id(path))])
    groups, notes = split(_disk_lister(path), printable(str(path)))
    if groups is None:
        return Held([(path, submission_id(path))], notes)
    staging = staging or STAGING
    try:
        return Held([_student(path, owner, members, staging, notes) for owner, members in groups], notes)
    except OSError as exc:
        raise LayoutError(f"{printable(str(path))}: no temporary folder for its students' files ({exc})") from None


Groups = list[tuple[Owner, list[Entry]]]


def split(entries_of: Lister, shown: str, at: PurePosixPath = PurePosixPath(),
          depth: int = 0) -> tuple[Groups | None, list[str]]:
    """Each student's entries, in the order of their ids (None: the folder is one student's), and notes:
    one for each entry that is no student's row. Raises LayoutError where a folder of a folder per student
    also holds work that no name gives to anyone: one student's folder or a class would be a guess."""
    entries = entries_of(at)
    read = [(entry, _readings(entry)) for entry in entries]
    style = _style(read)
    notes: list[str] = []
    owned = [(entry, readings[style]) for entry, readings in read if style in readings]
    if style == "canvas":
        owned = _canvas_owners(owned, shown, notes)
    counted = [(entry, owners) for entry, owners in owned if _counts(entry, style)]
    if len({frozenset(o.key for o in owners) for _, owners in counted}) < 2:
        loose = [entry for entry, readings in read if not readings and entry.work]
        if len(counted) == 1 and not loose and counted[0][0].kind == FOLDER and depth < MAX_DEPTH:
            return split(entries_of, f"{shown}/{counted[0][0].shown}", counted[0][0].path, depth + 1)
        return None, _modules_note(shown, loose)
    taken = {entry.path for entry, _ in owned}
    notes += _rest_notes(shown, style, entries, [(e, r) for e, r in read if e.path not in taken])
    groups, counts = _groups([(entry, owners[0]) for entry, owners in owned if len(owners) == 1], shown, style)
    return groups, counts + notes


def _readings(entry: Entry) -> dict[str, list[Owner]]:
    """Whose `entry` is under each style of names that reads its whole name: one owner, or under Canvas
    each user its name may stand for; none for a name longer than a file's may be."""
    name = entry.name
    if len(name) > MAX_NAME_CHARS:
        return {}
    found: dict[str, list[Owner]] = {}
    attempt = ATTEMPT.search(name)
    if attempt and attempt.start():
        prefix = name[:attempt.start()]
        found["blackboard"] = [Owner("blackboard", prefix, prefix.rsplit("_", 1)[-1], attempt[1])]
    moodle = MOODLE_FILE.fullmatch(name) or (MOODLE_FOLDER.fullmatch(name) if entry.kind in (FOLDER, LINK) else None)
    if moodle:
        found["moodle"] = [Owner("moodle", moodle[1], moodle[1])]
    if canvas := _canvas_readings(name):
        found["canvas"] = canvas
    if entry.kind == FOLDER or entry.path.suffix == ".zip":
        stem = name if entry.kind == FOLDER else entry.path.stem
        if stem.lower() not in OWN_NAMES:
            found["folder"] = [Owner("folder", name, stem)]
    return found


def _canvas_readings(name: str) -> list[Owner]:
    """Each user `name` may be Canvas's name for (module docstring): Canvas joins the user's name, `LATE`
    and the user id, then the attachment's id and its display name, with `_`. A user's name is word
    characters (Canvas removes the rest) and may hold `_<digits>` of its own, so each `_` before the first
    other character may end it; under anonymous grading there is no name, and the id is `anon_<id>`."""
    found = []
    if anonymous := CANVAS_ANONYMOUS.match(name):
        found.append(Owner("canvas", anonymous[1], anonymous[1], prefix=name[:anonymous.end(1)], anonymous=True))
    last = next((i for i, c in enumerate(name) if c.isascii() and not (c.isalnum() or c == "_")), len(name))
    at = name.find("_", 0, last)
    while at >= 0:
        if ids := CANVAS_IDS.match(name, at + 1):
            found.append(Owner("canvas", ids[1], ids[1], prefix=name[:ids.end(1)]))
        at = name.find("_", at + 1, last)
    return found


def _style(read: list[tuple[Entry, dict[str, list[Owner]]]]) -> str:
    """The style of names that reads the most entries that count; of as many, the first in STYLES."""
    counts = {style: sum(style in readings and _counts(entry, style) for entry, readings in read) for style in STYLES}
    return max(STYLES, key=lambda style: (counts[style], -list(STYLES).index(style)))


def _counts(entry: Entry, style: str) -> bool:
    """Whether `entry`, read in `style`, makes its owner a student: an LMS's name always (a student who sent a
    PDF has a row that says so); a folder only when it holds work (a student's own `img/` is no student)."""
    return entry.work or style != "folder"


def _canvas_owners(owned: list[tuple[Entry, list[Owner]]], shown: str,
                   notes: list[str]) -> list[tuple[Entry, list[Owner]]]:
    """Each Canvas entry's owners, by what Canvas guarantees: the files of one user all begin with the same
    name, LATE and id (one name and one submission a user), and a download is anonymous or not as a whole.
    A reading that an entry read as one user's contradicts is dropped, and a note says so; an entry still
    read as two users' is no one's row: a note names both."""
    sure = [owners for _, owners in owned if len({o.key for o in owners}) == 1]
    prefixes: dict[str, set[str]] = {}
    for owner in (o for owners in sure for o in owners):
        prefixes.setdefault(owner.key, set()).add(owner.prefix)
    anonymous = {o.anonymous for owners in sure for o in owners}
    found = []
    for entry, owners in owned:
        kept = [o for o in owners if (o.key not in prefixes or o.prefix in prefixes[o.key])
                and (len(anonymous) != 1 or o.anonymous in anonymous)] or owners
        users = list({o.key: o for o in kept}.values())
        found.append((entry, users))
        if len({o.key for o in owners}) == 1:
            continue
        if len(users) == 1:
            notes.append(f"{entry.shown} in {shown}: its name reads as {_users(owners)}; graded as user "
                         f"{printable(users[0].id)}'s: {_evidence(owners, users[0], prefixes)}")
        else:
            notes.append(f"{entry.shown} in {shown}: its name reads as {_users(users)} (a Canvas name may end in "
                         f"`_<digits>`), so whose it is would be a guess: not graded; grade it as a PATH of its "
                         f"own: `grade {shown}/{entry.shown}`")
    return found


def _users(owners: list[Owner]) -> str:
    """`user 67890 (named smith_12345) or user 12345 (named smith)`."""
    named = {o.key: f"user {printable(o.id)} ({_named(o.prefix, o)})" for o in owners}
    return " or ".join(named.values())


def _named(prefix: str, owner: Owner) -> str:
    """How a Canvas reading names its user: the name before `_<id>` in `prefix`."""
    if owner.anonymous:
        return "anonymous"
    name = prefix[:-len(owner.key) - 1]
    return f"named {printable(name)}" if name else "no name"


def _evidence(owners: list[Owner], owner: Owner, prefixes: dict[str, set[str]]) -> str:
    """Why the readings of `owners` other than `owner`'s were dropped."""
    why = []
    for other in {o.key: o for o in owners if o.key != owner.key}.values():
        if other.key in prefixes:
            names = " and ".join(_named(prefix, other) for prefix in sorted(prefixes[other.key]))
            why.append(f"user {printable(other.id)}'s other files have them {names}")
        else:
            why.append(f"the download's other files are {'' if owner.anonymous else 'not '}anonymous")
    return "; ".join(dict.fromkeys(why))


def _rest_notes(shown: str, style: str, entries: list[Entry],
                rest: list[tuple[Entry, dict[str, list[Owner]]]]) -> list[str]:
    """A note for each entry that is no student's row (a name of another style, work that no name gives to
    anyone, a link, a special file), then one for the files that hold no work. In a folder of a folder
    per student, work that no name gives to anyone is refused (LayoutError): no LMS named the entries, and
    one student's folder or a class would be a guess."""
    loose = [entry for entry, readings in rest if not readings and entry.work]
    if style == "folder" and loose:
        students = [entry for entry in entries if entry.kind == FOLDER or entry.path.suffix == ".zip"]
        raise LayoutError(f"{shown}: holds notebooks or modules of its own ({_listed(loose)}) beside "
                          f"{len(students)} entries of students ({STYLES[style]}: {_listed(students)}): one "
                          f"student's folder or a class? Not guessed.\n{_how(shown, entries)}")
    notes, plain = [], []
    for entry, readings in rest:
        if entry.kind == LINK:
            notes.append(f"{entry.shown} in {shown}: a symbolic link, never followed: not graded")
        elif entry.kind == OTHER:
            notes.append(f"{entry.shown} in {shown}: not a regular file or folder: not graded")
        elif readings or entry.work:
            named = (f"named as {' or '.join(STYLES[s] for s in readings)}, unlike the rest ({STYLES[style]})"
                     if readings else "its name gives it to no student")
            notes.append(f"{entry.shown} in {shown}: {named}, so whose it is would be a guess: not graded; grade it "
                         f"as a PATH of its own: `grade {shown}/{entry.shown}`")
        else:
            plain.append(entry)
    if plain:
        notes.append(f"{shown}: not graded, as no student's and holding no notebook, module or zip: {_listed(plain)}")
    return notes


def _modules_note(shown: str, loose: list[Entry]) -> list[str]:
    """Several modules and no notebook are graded as one student's code (a student may split it in
    modules); a folder of a module per student reads the same, so a note says how to grade that."""
    modules = [e for e in loose if e.kind == FILE and e.path.suffix == ".py"]
    if len(modules) < 2 or any(e.path.suffix in (".ipynb", ".zip") for e in loose):
        return []
    return [f"{shown}: {len(modules)} modules and no notebook ({_listed(modules)}), graded as one student's code; "
            f"for a module per student, give each as a PATH of its own (`grade {shown}/*.py`)"]


def _groups(owned: list[tuple[Entry, Owner]], shown: str, style: str) -> tuple[Groups, list[str]]:
    """The entries of each student (a Blackboard student's latest attempt only), and the notes; a
    student whose entries hold no work (a PDF, a text entry) is one too: their row says so."""
    by_key: dict[str, list[tuple[Entry, Owner]]] = {}
    for entry, owner in owned:
        by_key.setdefault(owner.key, []).append((entry, owner))
    notes = [f"{shown}: {len(by_key)} students ({STYLES[style]}), each graded as a submission of its own"]
    groups: Groups = []
    for key in sorted(by_key, key=lambda k: (by_key[k][0][1].id, k)):
        pairs = by_key[key]
        latest = max(owner.attempt for _, owner in pairs)
        if len({owner.attempt for _, owner in pairs}) > 1:
            notes.append(f"{printable(pairs[0][1].id)}: {len({o.attempt for _, o in pairs})} attempts in {shown}; "
                         f"the latest ({latest}) is graded")
        groups.append((pairs[0][1], [entry for entry, owner in pairs if owner.attempt == latest]))
    return groups, notes


def _how(shown: str, entries: list[Entry]) -> str:
    """How to pass it instead."""
    how = (f"Give one PATH per student (`grade {shown}/<student> ...`), or a class folder that holds one folder "
           "or zip per student, or one LMS download, and nothing else.")
    if any(e.name in ("nbgrader_config.py", "gradebook.db") for e in entries):
        how += " For an nbgrader course, run `grade --nbgrader ASSIGNMENT` in its root."
    return how


def _listed(entries: list[Entry]) -> str:
    names = [e.shown for e in entries[:SHOWN]]
    return ", ".join(names) + (f" and {len(entries) - SHOWN} more" if len(entries) > SHOWN else "")


# --------------------------------------------------------------------------
# a folder on disk


def _disk_lister(root: Path) -> Lister:
    """The entries of a folder within `root`, read without following a link (see `_listed_folder`)."""
    return lambda at: _listed_folder(root / at, at)


def _listed_folder(folder: Path, at: PurePosixPath) -> list[Entry]:
    """The entries at the top of `folder`, sorted, hidden ones and macOS's left out; more than
    MAX_ENTRIES is refused (a class that big is graded in parts)."""
    found: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                if len(found) >= MAX_ENTRIES:
                    raise LayoutError(f"{printable(str(folder))}: more than {MAX_ENTRIES:,} entries; grade it in "
                                      "parts (a PATH per part)")
                if not _skipped(entry.name):
                    found.append(entry)
    except OSError:
        return []  # read_submission says it could not be listed
    return [_entry(e, at / e.name) for e in sorted(found, key=lambda e: e.name)]


def _entry(entry: os.DirEntry, path: PurePosixPath) -> Entry:
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except OSError:
        return Entry(path, OTHER, False)
    if stat.S_ISDIR(mode):
        return Entry(path, FOLDER, _holds_work(Path(entry.path), [MAX_FILES], 0))
    kind = FILE if stat.S_ISREG(mode) else LINK if stat.S_ISLNK(mode) else OTHER
    return Entry(path, kind, _is_work(entry.name))


def _holds_work(folder: Path, budget: list[int], depth: int) -> bool:
    """Whether a notebook, module or zip lies below `folder`: at most MAX_FILES entries looked at, in
    at most MAX_DEPTH levels, links not followed; stops at the first."""
    if depth > MAX_DEPTH:
        return False
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                budget[0] -= 1
                if budget[0] < 0:
                    return False
                if _skipped(entry.name):
                    continue
                if _is_work(entry.name) or (entry.is_dir(follow_symlinks=False)
                                            and _holds_work(Path(entry.path), budget, depth + 1)):
                    return True
    except OSError:  # a folder that cannot be listed holds nothing to split by; read_submission says why
        return False
    return False


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_NAMES


def _is_work(name: str) -> bool:
    return PurePosixPath(name).suffix in WORK_SUFFIXES and name not in assignment.PUBLIC_HELPERS


# --------------------------------------------------------------------------
# a zip given as a PATH: looked into, never unpacked


def _refuse_class_zip(path: Path) -> None:
    """A zip that holds several students' work (an LMS's download, as it came) is refused: unzipped,
    it is split. Looked into only within the reader's limit on a zip (a bigger one is refused there)."""
    names = _zip_names(path)
    if names is None:
        return
    lister = _zip_lister(names)
    shown = printable(str(path))
    try:
        groups, _ = split(lister, shown)
    except LayoutError as exc:
        raise LayoutError(f"{exc}\n(in the zip: unzip it and give the folder)") from None
    if groups is not None:
        raise LayoutError(f"{shown}: a zip of {len(groups)} students' work ({_listed([m for _, ms in groups for m in ms])}); "
                          f"unzip it (`unzip {shown} -d DIR`) and give the folder: `grade DIR`")


def _zip_names(path: Path) -> list[tuple[str, bool]] | None:
    """(name, is a link) of a zip's members, listed once within the reader's bounds (`submission.open_zip`);
    None when it cannot be read here (read_submission says why)."""
    opened = open_zip(path)
    if isinstance(opened, str):
        return None
    return [(m.filename, (m.external_attr >> 16) & 0o170000 == S_IFLNK) for m in opened[0].infolist()]


def _zip_lister(names: list[tuple[str, bool]]) -> Lister:
    """The entries of a folder within a zip, from its members' names."""
    kinds: dict[PurePosixPath, str] = {}
    work: set[PurePosixPath] = set()
    for name, is_link in names:
        parts = [p for p in name.split("/") if p not in ("", ".", "..")]
        if not parts or any(_skipped(p) or len(p) > MAX_NAME_CHARS for p in parts):
            continue
        for depth in range(1, len(parts)):
            kinds[PurePosixPath(*parts[:depth])] = FOLDER
        path = PurePosixPath(*parts)
        kinds.setdefault(path, FOLDER if name.endswith("/") else LINK if is_link else FILE)
        if kinds[path] != FOLDER and _is_work(path.name):
            work.update([path, *path.parents])

    def entries(at: PurePosixPath) -> list[Entry]:
        return [Entry(p, kinds[p], p in work) for p in sorted(kinds) if p.parent == at and p != at]

    return entries


# --------------------------------------------------------------------------
# each student's path


class Staging:
    """A temporary folder, removed when the process ends, with a folder per student whose files lie
    loose among other students' (an LMS's flat download)."""

    def __init__(self) -> None:
        self._root: Path | None = None
        self._made = 0

    def folder(self) -> Path:
        """A new empty folder (named by a count: no student chooses any part of its path)."""
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="autograder-students-"))
            atexit.register(shutil.rmtree, self._root, True)
        self._made += 1
        made = self._root / f"{self._made:05d}"
        made.mkdir()
        return made


STAGING = Staging()


def _student(root: Path, owner: Owner, members: list[Entry], staging: Staging,
             notes: list[str]) -> tuple[Path, str]:
    """The path that read_submission reads for one student: their folder or zip itself, or a folder
    of their files. A student with a folder and other files is graded from the folder; a note names the rest."""
    work = [m for m in members if m.work]
    whole = work or members  # a folder that holds no work is read too: the row says what was found
    if len(whole) == 1 and (whole[0].kind == FOLDER or whole[0].path.suffix == ".zip"):
        return root / whole[0].path, owner.id
    folders = [m for m in work if m.kind == FOLDER]
    if folders:
        rest = [m for m in work if m != folders[0]]
        notes.append(f"{printable(owner.id)} in {printable(str(root))} has a folder and other files: graded from "
                     f"{folders[0].shown}, not from {_listed(rest)}; to grade them together, put them in one folder "
                     "and give it as a PATH of its own")
        return root / folders[0].path, owner.id
    folder = staging.folder()
    for member in (m for m in members if m.work or m.kind in (LINK, OTHER)):  # a link: its row says it was not read
        try:
            _stage(root / member.path, folder / member.name)
        except OSError as exc:  # then its row says the notebook is missing, and this says why
            notes.append(f"{printable(str(root / member.path))} could not be copied for grading ({exc.strerror})")
    return folder, owner.id


def _stage(source: Path, target: Path) -> None:
    """`source` at `target` as read_submission will judge it: a hard link or a copy of a regular file
    within the reader's limit; a file over it as a sparse one as big (refused there, unread here); a
    link or a special file as one of the same kind (refused there, never followed or opened here)."""
    try:
        info = os.lstat(source)
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode):
        os.symlink("not-followed", target)
    elif not stat.S_ISREG(info.st_mode):
        os.mkfifo(target)
    elif info.st_size > _limit(source.suffix):
        with open(target, "wb") as fh:
            fh.truncate(info.st_size)
        os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    else:
        try:
            os.link(source, target, follow_symlinks=False)
        except OSError:
            _copy(source, target, info)


def _copy(source: Path, target: Path, info: os.stat_result) -> None:
    """A copy of at most the reader's limit, opened without following a link or waiting on a pipe."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return
        data = fh.read(_limit(source.suffix) + 1)
    target.write_bytes(data)
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))


def _limit(suffix: str) -> int:
    return {".ipynb": MAX_NOTEBOOK_BYTES, ".py": MAX_PY_BYTES}.get(suffix, MAX_ZIP_BYTES)
