"""Reading a submission: the code a grader may run, and what is wrong with the files.

A submission is data. Its files are read without following a symbolic link, and
a link, a pipe, a device or a file too large is refused with a note before
anything is read; a notebook that is not valid JSON (or nested too deeply to
read) is noted as unreadable. Nothing a student chose can make the grader read
anything outside the submission or wait on it, or cost the grader more than
its bounds, known before reading: a zip's end record (`open_zip`), a file's
size, what parsing notebook JSON would cost (`JsonCost`, counted while it is
read), names no longer than a file's (MAX_NAME_CHARS).

The read-only setup cells of the *release* notebook run first, then the
student's cells in the student's notebook order, each turned into Python as
IPython turns it (model.jupyter: magics and shell commands become calls that do
nothing when graded): every answer cell (matched by nbgrader grade_id; every
copy runs, so a name defined twice is the last definition, as Restart & Run
All leaves it) and, of the cells the student added, the definitions, imports
and the assignments that graded code reads, whatever they compute. An answer
cell whose metadata is gone (a notebook of the student's own) is found by the
names it defines, and graded as an added cell. A student cannot slip code into
a setup cell, helpers and constants written in a cell of their own count as
they do in the notebook, and exploratory or plotting statements never run
while grading.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import stat
import struct
import time
import zipfile
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path, PurePath
from typing import IO, Any, Callable, Iterable

from .. import assignment, quiz, releases
from . import jupyter
from ..text import code_lines, printable

# The code a submission may hold in all (its modules, or its notebooks' answer cells and the definitions of the
# cells it added), bounded before anything parses it: six times the whole answer key, notebook and exploration
# included. The grader's own scans read each byte of it (the tampering scan, the class report's similarity), at
# about a second per 2 MiB and pass, outside every limit a submission's own time has.
MAX_CODE_BYTES = 256 * 2**10
MAX_PY_BYTES = MAX_CODE_BYTES
MAX_NOTEBOOK_BYTES = 128 * 2**20  # a file: its outputs (plots) included; the limit on code is MAX_CODE_BYTES
MAX_FILES = 500  # notebooks and modules found in a submission (its folders and zips)
MAX_SCANNED = 10_000  # entries of a submission's folders looked at, in all
MAX_DEPTH = 8
MAX_NAME_CHARS = 255  # a file's own name: what every file system allows; a zip's longer one is refused unread

Cell = tuple[str, str]  # (label shown in tracebacks, code)
REFUSED = "so it was not read"  # how every note on a refused file ends (a file's name only ever comes before it)


@dataclass
class Submission:
    """One student's code, ready to load, and the problems found while reading it."""

    id: str
    cells: dict[str, list[Cell]] = field(default_factory=dict)  # notebook name -> cells
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what a person should know that is not a problem (a file's name)
    newest_file: float = 0.0  # modification time of its newest file: a later resubmission is graded again
    quiz_shown: dict[str, Any] | None = None  # what its quiz.ipynb shows (quiz.shown_quiz); None: no quiz notebook
    code_bytes: int = field(default=0, repr=False, compare=False)  # what its cells hold so far, while it is read (MAX_CODE_BYTES)
    zip_bytes: int = field(default=0, repr=False, compare=False)  # its zips held in memory while it is read (MAX_ZIP_BYTES)
    turned_bytes: int = field(default=0, repr=False, compare=False)  # what IPython's transformer read of it so far (model.jupyter)
    release: releases.Release | None = field(default=None, repr=False, compare=False)  # read against (None: the grader's own)

    def cells_for(self, part: str) -> list[Cell]:
        return self.cells.get(assignment.part(part).notebook, [])

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "cells": {k: [list(c) for c in v] for k, v in self.cells.items()},
                "problems": self.problems, "notes": self.notes, "newest_file": self.newest_file,
                "quiz_shown": self.quiz_shown}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Submission":
        cells = {str(k): [(str(a), str(b)) for a, b in v] for k, v in data["cells"].items()}
        return cls(str(data["id"]), cells, [str(p) for p in data["problems"]], [str(n) for n in data.get("notes", [])],
                   float(data.get("newest_file", 0.0)), data.get("quiz_shown"))


class SubmissionError(ValueError):
    """A path that is not a submission at all."""


MAX_ID_BYTES = 120  # an id is a folder name in --out: far below the file system's 255 bytes
RESERVED_IDS = ("grades.csv", "class_report.html", "items.csv", "quiz_options.csv",  # the run's own files in --out
               "nbgrader-gradebook.log")


def submission_id(path: Path) -> str:
    """The folder's name, or the file's stem, made safe to be a folder name in --out (see `safe_id`)."""
    return safe_id(path.name if path.is_dir() and not path.is_symlink() else path.stem)


def safe_id(name: str) -> str:
    """`name` as an id that can only ever be one folder inside --out, and can be written anywhere:
    bytes that are not UTF-8 read as Latin-1 (as unzip leaves `Müller`), separators, control
    characters and leading dots replaced, never empty, `.` or `..`, nor one of the run's own files."""
    raw = os.fsencode(name)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")
    text = "".join("_" if c in "/\\" or not c.isprintable() else c for c in text).strip().lstrip(".")
    while len(text.encode("utf-8")) > MAX_ID_BYTES:
        text = text[:-1]
    text = text.strip() or "submission"
    return text + "_" if text.lower() in RESERVED_IDS else text


def unique_ids(ids: list[str]) -> list[str]:
    """The same ids, a later one that would share a folder with an earlier one (also on a file system
    that ignores case) given a suffix `~2`, `~3`...: two submissions never share an id."""
    taken: set[str] = set()
    found = []
    for sid in ids:
        candidate, n = sid, 1
        while candidate.lower() in taken:
            n += 1
            candidate = f"{sid}~{n}"
        taken.add(candidate.lower())
        found.append(candidate)
    return found


def read_submission(path: Path, sid: str | None = None, release: releases.Release | None = None) -> Submission:
    """A submission from a .py module, a notebook, or a folder holding one student's files, read against
    `release` (its setup and answer cells; None: the grader's own copy)."""
    path = Path(path)
    submission = Submission(sid or submission_id(path), release=release)
    try:
        info = os.lstat(path)
    except OSError:
        raise SubmissionError(f"{path}: no such file or folder") from None
    if stat.S_ISDIR(info.st_mode):
        _read_folder(submission, path)
    elif stat.S_ISREG(info.st_mode) and path.suffix in (".py", ".ipynb"):
        _read_file(submission, _on_disk(path, path.name, info), notebook_named(path.stem) or assignment.NOTEBOOKS[0])
    elif stat.S_ISREG(info.st_mode) and path.suffix == ".zip":
        found: list[File] = []
        _unzip(submission, path, path.name, found)
        _choose(submission, found)
    elif stat.S_ISREG(info.st_mode):
        raise SubmissionError(f"{path}: a submission is a .py module, a .ipynb notebook, a .zip of them or a folder")
    else:
        submission.problems.append(_refused(path.name, info))
    if not submission.cells and not submission.problems:
        submission.problems.append("no attention.ipynb, quiz.ipynb or .py file found")
    return submission


def notebook_named(stem: str) -> str | None:
    """The assignment's notebook a file's name stands for, as students and LMSs name them: any case, a copy's
    suffix (`quiz (1)`, `attention-copy`, Canvas's `attention-1`), an LMS's prefix (Canvas's
    `smithjohn_12345_678_attention`, Moodle's `Ann Lee_123_assignsubmission_file_attention`). Read with string
    operations, each linear in the name, and only a name no file system would refuse (MAX_NAME_CHARS)."""
    if len(stem) > MAX_NAME_CHARS:
        return None
    text = _without_copy_suffix(stem.lower().strip())
    for notebook in assignment.NOTEBOOKS:
        before = text[:-len(notebook)]
        if text.endswith(notebook) and (not before or before[-1].isspace() or before[-1] in "_.-"):
            return notebook
    return None


def _without_copy_suffix(text: str) -> str:
    """`text` less what a copy adds at its end: ` (1)`, then `-copy`, ` copy 2`, `_copy`, then `-1`."""
    if text.endswith(")") and "(" in text:
        opened = text.rindex("(")
        if text[opened + 1:-1].isdecimal():
            text = text[:opened].rstrip()
    word = _without_digits(text).rstrip()
    if word.endswith("copy"):
        text = _without_separators(word[:-len("copy")])
    number = _without_digits(text)
    if number != text and number.endswith("-"):
        text = number[:-1]
    return text


def _without_separators(text: str) -> str:
    """`text` less the spaces, `_` and `-` it ends with."""
    end = len(text)
    while end and (text[end - 1].isspace() or text[end - 1] in "_-"):
        end -= 1
    return text[:end]


def _without_digits(text: str) -> str:
    """`text` less the decimal digits it ends with."""
    end = len(text)
    while end and text[end - 1].isdecimal():
        end -= 1
    return text[:end]


@dataclass(frozen=True)
class File:
    """A file of a submission, on disk or in a zip it uploaded: read only through `read`, within a limit."""

    shown: str  # as the notes name it: its path within the submission
    name: str
    mtime: float
    read: Callable[[int], "bytes | str"]  # its bytes (at most the limit), or why they were not read

    @property
    def stem(self) -> str:
        return PurePath(self.name).stem

    @property
    def suffix(self) -> str:
        return PurePath(self.name).suffix


def _on_disk(path: Path, shown: str, info: os.stat_result) -> File:
    return File(shown, path.name, info.st_mtime, lambda limit: _read_bytes(path, limit))


def _read_folder(submission: Submission, folder: Path) -> None:
    found: list[File] = []
    _scan(submission, folder, "", found, 0)
    _choose(submission, found)


def _choose(submission: Submission, found: list["File"]) -> None:
    """Read the files that stand for the assignment's notebooks (or, without any, its .py modules), and
    say which file was read for which notebook, which is missing, and, where several files stand for one
    notebook, which of them was graded and why."""
    standing: dict[str, list[File]] = {}
    for file in found:
        notebook = notebook_named(file.stem) if file.suffix == ".ipynb" else None
        if notebook:
            standing.setdefault(notebook, []).append(file)
    modules = [f for f in found if f.suffix == ".py" and f.name not in assignment.PUBLIC_HELPERS]
    if standing:
        for notebook, files in standing.items():
            file, why = _graded_of(notebook, files)
            _read_file(submission, file, notebook)
            if len(files) > 1:
                submission.notes.append(f"{notebook}.ipynb: {len(files)} files stand for it "
                                        f"({', '.join(printable(f.shown, 80) for f in files[:SHOWN_FILES])}"
                                        f"{' and more' if len(files) > SHOWN_FILES else ''}); "
                                        f"{printable(file.shown, 80)} is graded, {why}")
            elif file.shown != f"{notebook}.ipynb":
                submission.notes.append(f"{notebook}.ipynb read from {printable(file.shown)}")
        missing = [n for n in assignment.NOTEBOOKS if n not in standing]
        submission.problems += [f"no {n}.ipynb found (its part{'s' if len(_parts_of(n)) > 1 else ''} "
                                f"{', '.join(_parts_of(n))} score 0)" for n in missing]
    elif modules:
        for file in modules:
            _read_file(submission, file, assignment.NOTEBOOKS[0])
    else:
        names = ", ".join(printable(f.shown, 80) for f in found[:10]) or "nothing"
        submission.problems.append(f"no attention.ipynb, quiz.ipynb or .py file found (found: {names})")


def _graded_of(notebook: str, files: list["File"]) -> tuple["File", str]:
    """Of the files that stand for `notebook`, the one graded and why: the one named exactly so, else the
    newest (of files as new, the first found)."""
    exact = [f for f in files if f.stem == notebook]
    if len(exact) == 1:
        return exact[0], "the one named exactly so"
    pool = exact or files
    newest = max(pool, key=lambda f: f.mtime)  # the first of the newest
    alike = sum(f.mtime == newest.mtime for f in pool)
    return newest, "the newest" + (f" (of {alike} as new, the first found)" if alike > 1 else "")


def _parts_of(notebook: str) -> list[str]:
    return [p.name for p in assignment.PARTS if p.notebook == notebook]


def _scan(submission: Submission, folder: Path, prefix: str, found: list[File], depth: int,
          budget: list[int] | None = None) -> None:
    """Every regular .py and .ipynb file below `folder`, and in the .zip files there; links and special
    files refused. At most MAX_SCANNED entries are looked at in all (`budget`: how many are left), in at most
    MAX_DEPTH levels: a folder that would take more is not read, and a problem says so."""
    budget = [MAX_SCANNED] if budget is None else budget
    entries = _listing(folder, budget[0])
    if isinstance(entries, str):
        submission.problems.append(f"{printable(prefix or folder.name)}: {entries}")
        return
    budget[0] -= len(entries)
    for entry in entries:
        shown = prefix + entry.name
        if len(found) >= MAX_FILES or depth > MAX_DEPTH:
            submission.problems.append(f"more than {MAX_FILES} files or {MAX_DEPTH} levels of folders: the rest was not read")
            return
        info = entry.stat(follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            if entry.name not in (".ipynb_checkpoints", "__pycache__"):
                _scan(submission, Path(entry.path), shown + "/", found, depth + 1, budget)
        elif stat.S_ISREG(info.st_mode):
            if Path(entry.name).suffix in (".py", ".ipynb"):
                found.append(_on_disk(Path(entry.path), shown, info))
            elif Path(entry.name).suffix == ".zip":
                _unzip(submission, Path(entry.path), shown, found)
        elif Path(entry.name).suffix in (".py", ".ipynb", ".zip") or stat.S_ISLNK(info.st_mode):
            submission.problems.append(_refused(shown, info))


def _listing(folder: Path, most: int) -> list[os.DirEntry] | str:
    """The entries of `folder`, sorted by name, or why they were not: it could not be listed, or it holds
    more than `most` (what is left of MAX_SCANNED), found before they are all held."""
    entries: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                if len(entries) >= most:
                    return f"more than {MAX_SCANNED:,} entries in its folders in all: the rest was not read"
                entries.append(entry)
    except OSError as exc:
        return f"could not be listed ({exc.strerror})"
    return sorted(entries, key=lambda e: e.name)


def _refused(shown: str, info: os.stat_result) -> str:
    if stat.S_ISLNK(info.st_mode):
        return f"{printable(shown)} is a symbolic link: links are never followed, {REFUSED}"
    return f"{printable(shown)} is not a regular file (a pipe, socket or device), {REFUSED}"


def _read_bytes(path: Path, limit: int) -> bytes | str:
    """The file's bytes, or why they were not read. Opened without following a link and without
    waiting on a pipe; what is opened must be a regular file; read as `_read_within` reads it."""
    opened = _open_regular(path, limit, lambda size: f"is {size:,} bytes, over the limit of {limit:,}, {REFUSED}")
    if isinstance(opened, str):
        return opened
    fh, _ = opened
    with fh:
        return _read_within(fh, limit, path.suffix == ".ipynb", "grew to more than")


def read_regular(path: Path, limit: int) -> tuple[bytes, os.stat_result] | str:
    """The bytes of the regular file at `path` and what fstat says of the file opened (its owner, for whoever
    must know who wrote it: the grading service's exchange), or why not; read as every file of a submission
    is (`_read_bytes`): no link followed, the size bounded before reading, a notebook's JSON cost as read."""
    opened = _open_regular(path, limit, lambda size: f"is {size:,} bytes, over the limit of {limit:,}, {REFUSED}")
    if isinstance(opened, str):
        return opened
    fh, _ = opened
    with fh:
        info = os.fstat(fh.fileno())
        data = _read_within(fh, limit, path.suffix == ".ipynb", "grew to more than")
    return data if isinstance(data, str) else (data, info)


def _open_regular(path: Path, limit: int, too_large: Callable[[int], str]) -> tuple[IO[bytes], int] | str:
    """The regular file at `path`, open for reading, and its size; or why not (`too_large(size)` over `limit`
    bytes). Opened without following a link and without waiting on a pipe; a pipe, socket or device is
    refused once open."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return f"could not be opened ({exc.strerror})"
    fh = os.fdopen(fd, "rb")
    info = os.fstat(fh.fileno())
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        fh.close()
        return f"is not a regular file, {REFUSED}" if not stat.S_ISREG(info.st_mode) else too_large(info.st_size)
    return fh, info.st_size


READ_CHUNK = 2**20  # what is read of a file at a time


def _read_within(fh: IO[bytes], limit: int, notebook: bool, over: str) -> bytes | str:
    """At most `limit` bytes of `fh`, read a chunk at a time, or why not (`over`: how a file over `limit`
    is said). A notebook stops at the chunk that takes its JSON over what parsing it may cost (`JsonCost`):
    a small zip can hold a large notebook, and the grader never holds one it would refuse."""
    held = io.BytesIO()
    cost = JsonCost() if notebook else None
    while chunk := fh.read(min(READ_CHUNK, limit + 1 - held.tell())):
        held.write(chunk)
        if held.tell() > limit:
            return f"{over} {limit:,} bytes, {REFUSED}"
        if cost is not None and (why := cost.add(chunk)):
            return f"holds {why}, {REFUSED}"
    return held.getvalue()


def _read_file(submission: Submission, file: File, notebook: str) -> None:
    submission.newest_file = max(submission.newest_file, file.mtime)
    data = file.read(MAX_NOTEBOOK_BYTES if file.suffix == ".ipynb" else MAX_PY_BYTES)
    if isinstance(data, str):
        submission.problems.append(f"{printable(file.shown)} {data}")
        return
    if file.suffix == ".py":
        code = data.decode("utf-8-sig", errors="replace")  # a byte-order mark is read past, as Python does
        if not _charge(submission, code, file.shown):
            return
        for name in assignment.NOTEBOOKS:
            submission.cells.setdefault(name, []).append((printable(file.name), code))
    else:
        _add_notebook(submission, data, notebook, file.shown)


MAX_ZIP_BYTES = 64 * 2**20  # a zip, and all of one submission's zips: each is held in memory while it is read
MAX_ZIP_MEMBERS = 10_000  # members a zip may list: a student's project folder, zipped
MAX_ZIP_DIRECTORY_BYTES = 2 * 2**20  # its central directory, which zipfile lists whole: about 10 bytes of memory a byte
S_IFLNK = 0o120000
SHOWN_FILES = 8  # files a note names before "and more"


def _unzip(submission: Submission, path: Path, shown: str, found: list[File]) -> None:
    """The .py and .ipynb members of an uploaded zip (`open_zip`, within what is left of the submission's
    MAX_ZIP_BYTES), read in memory: a member that is a link, a path out of the archive, a name longer than a
    file's may be, or a file over its limit (however small its header says it is) is refused."""
    opened = open_zip(path, MAX_ZIP_BYTES - submission.zip_bytes)
    if isinstance(opened, str):
        submission.problems.append(f"{printable(shown)} {opened}")
        return
    book, size = opened
    submission.zip_bytes += size
    long_names = []
    for member in book.infolist():
        name = member.filename
        if member.is_dir() or "__MACOSX/" in name or PurePath(name).name.startswith("._"):
            continue
        if PurePath(name).suffix not in (".py", ".ipynb"):
            continue
        if len(PurePath(name).name) > MAX_NAME_CHARS:
            long_names.append(name)
            continue
        if (member.external_attr >> 16) & 0o170000 == S_IFLNK:
            submission.problems.append(f"{printable(f'{shown}/{name}')} is a symbolic link: links are never followed, "
                                       f"{REFUSED}")
            continue
        if len(found) >= MAX_FILES:
            submission.problems.append(f"{printable(shown)}: more than {MAX_FILES} notebooks and modules in all: "
                                       "the rest was not read")
            break
        mtime = _zip_time(member)
        found.append(File(f"{shown}/{name}", PurePath(name).name, mtime,
                          partial(_read_member, book, member)))
        submission.newest_file = max(submission.newest_file, mtime)
    if long_names:
        submission.problems.append(f"{printable(shown)}: {len(long_names)} member(s) named with more than "
                                   f"{MAX_NAME_CHARS} characters (the first: {printable(long_names[0], 60)}...), "
                                   f"{REFUSED}")


def open_zip(path: Path, limit: int = MAX_ZIP_BYTES) -> tuple[zipfile.ZipFile, int] | str:
    """The zip at `path`, listed once, in memory, and its size; or why it was not: a link, a special file,
    more than `limit` bytes, or an end record (`zip_end_record`), read before the rest of the zip is, that
    lists more than MAX_ZIP_MEMBERS members or a central directory over MAX_ZIP_DIRECTORY_BYTES."""
    over = "the limit" if limit == MAX_ZIP_BYTES else f"the {limit:,} left of a submission's limit"
    opened = _open_regular(path, limit, lambda size: f"is {size:,} bytes, over {over} of {MAX_ZIP_BYTES:,} for zips, "
                                                     f"{REFUSED}")
    if isinstance(opened, str):
        return opened
    fh, size = opened
    with fh:
        fh.seek(max(0, size - END_RECORD_TAIL))
        why = _zip_directory_refused(fh.read(END_RECORD_TAIL))
        if why:
            return why
        fh.seek(0)
        data = _read_within(fh, limit, False, "grew to more than")
    if isinstance(data, str):
        return data
    why = _zip_directory_refused(data[-END_RECORD_TAIL:])  # what zipfile will read: the bytes now held
    if why:
        return why
    try:
        book = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError):
        return f"is not a readable zip, {REFUSED}"
    if len(book.infolist()) > MAX_ZIP_MEMBERS:  # an end record may understate them; the directory bound held
        return f"lists more than {MAX_ZIP_MEMBERS:,} members, {REFUSED}"
    return book, len(data)


# A zip's end, where zipfile looks for its end record: ZIP64's record and locator, the end record, and a comment.
# (The `type: ignore[attr-defined]`s here and in zip_end_record: zipfile's end-record constants, sizeEndCentDir
# and the rest, are module globals that typeshed's zipfile stubs leave out.)
END_COMMENT = 1 << 16
END_RECORD_TAIL = zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator + zipfile.sizeEndCentDir + END_COMMENT  # type: ignore[attr-defined]


def _zip_directory_refused(tail: bytes) -> str | None:
    """Why a zip whose last bytes are `tail` (END_RECORD_TAIL of them, or all it has) is refused before it
    is listed: more members, or a larger central directory, than its end record may state."""
    end = zip_end_record(tail)
    if end is None:
        return f"is not a readable zip (no end record), {REFUSED}"
    members, directory = end
    if members > MAX_ZIP_MEMBERS:
        return f"lists {members:,} members, over the limit of {MAX_ZIP_MEMBERS:,}, {REFUSED}"
    if directory > MAX_ZIP_DIRECTORY_BYTES:
        return f"has a directory of {directory:,} bytes, over the limit of {MAX_ZIP_DIRECTORY_BYTES:,}, {REFUSED}"
    return None


def zip_end_record(tail: bytes) -> tuple[int, int] | None:
    """(members, central directory bytes) as the end record in a zip's last bytes `tail` states them, found as
    zipfile finds it (the last 22 bytes, else the last signature before a comment), ZIP64's record where its
    locator precedes it; None without one. Nothing past the end record is parsed: zipfile lists the rest."""
    size = zipfile.sizeEndCentDir  # type: ignore[attr-defined]
    if len(tail) >= size and tail[-size:-size + 4] == zipfile.stringEndArchive and tail[-2:] == b"\0\0":  # type: ignore[attr-defined]
        at = len(tail) - size
    else:
        searched = max(0, len(tail) - size - END_COMMENT)
        at = tail.rfind(zipfile.stringEndArchive, searched)  # type: ignore[attr-defined]
        if at < 0 or len(tail) - at < size:
            return None
    fields = struct.unpack(zipfile.structEndArchive, tail[at:at + size])  # type: ignore[attr-defined]
    members, directory = fields[4], fields[5]  # the entries in all, the directory's size
    locator = tail[max(0, at - zipfile.sizeEndCentDir64Locator):at]  # type: ignore[attr-defined]
    record = tail[max(0, at - zipfile.sizeEndCentDir64Locator - zipfile.sizeEndCentDir64):  # type: ignore[attr-defined]
                  at - zipfile.sizeEndCentDir64Locator]  # type: ignore[attr-defined]
    if (len(locator) == zipfile.sizeEndCentDir64Locator and locator[:4] == zipfile.stringEndArchive64Locator  # type: ignore[attr-defined]
            and len(record) == zipfile.sizeEndCentDir64 and record[:4] == zipfile.stringEndArchive64):  # type: ignore[attr-defined]
        zip64 = struct.unpack(zipfile.structEndArchive64, record)  # type: ignore[attr-defined]
        members, directory = zip64[7], zip64[8]
    return members, directory


def _read_member(book: zipfile.ZipFile, member: zipfile.ZipInfo, limit: int) -> bytes | str:
    if member.file_size > limit:
        return f"is {member.file_size:,} bytes, over the limit of {limit:,}, {REFUSED}"
    try:
        with book.open(member) as fh:  # a header that lies about the size stops at the limit
            return _read_within(fh, limit, PurePath(member.filename).suffix == ".ipynb", "unpacks to more than")
    except (zipfile.BadZipFile, ValueError, OSError, RuntimeError, NotImplementedError, EOFError) as exc:
        return f"could not be unpacked ({type(exc).__name__}), {REFUSED}"


def _zip_time(member: zipfile.ZipInfo) -> float:
    try:
        return time.mktime((*member.date_time, 0, 0, -1))
    except (OverflowError, ValueError):
        return 0.0


@dataclass(frozen=True)
class _Cell:
    """A cell of the student's notebook that may run: its label in tracebacks, its code, its position in the
    notebook, its answer cell's grade_id (None: a cell the student added) and its statements, parsed once
    (None: it does not parse, or it was not parsed yet)."""

    label: str
    code: str
    number: int
    grade_id: str | None
    body: list[ast.stmt] | None = None


def _add_notebook(submission: Submission, data: bytes, name: str, shown: str) -> None:
    notebook = parse_notebook(data)
    read = notebook if isinstance(notebook, str) else notebook_cells(notebook)
    if name == quiz.NOTEBOOK and not isinstance(notebook, str):
        submission.quiz_shown = quiz.shown_quiz(notebook)  # what it shows the student: bounded, plain data
    if isinstance(read, str):
        submission.problems.append(f"{printable(shown)} could not be read: {read}")
        submission.cells.setdefault(name, [])
        return
    released = release_cells(name, submission.release)
    setup = [(f"{name}.ipynb, cell {grade_id}", code) for grade_id, code, is_answer in released
             if not is_answer and grade_id.startswith(assignment.SETUP_CELL_PREFIX)]
    answers = dict(answer_names(name, submission.release))
    cells: list[_Cell] = []  # in the notebook's order
    for cell in read:
        if cell.code and cell.source is None:
            submission.problems.append(f"{printable(shown)}: cell {cell.number}'s source is not text, {REFUSED}")
        elif cell.answer and cell.grade_id in answers:
            assert cell.source is not None  # an answer cell is a code cell: one without text was refused above
            cells.append(_Cell(f"{name}.ipynb, cell {cell.grade_id}", cell.source, cell.number, cell.grade_id))
        elif cell.answer:
            submission.problems.append(f"{printable(shown)}: cell {cell.number} is marked as an answer cell "
                                       f"{printable(str(cell.grade_id))}, which the assignment does not have; it does not run")
        elif cell.code and cell.grade_id is None and cell.source:
            cells.append(_Cell(f"{name}.ipynb, your cell {cell.number}", cell.source, cell.number, None))
    if not _charge(submission, "".join(c.code for c in cells), shown):  # before anything parses it
        submission.cells[name] = []
        return
    turned = _as_python(submission, cells, shown)
    if turned is None:
        submission.cells[name] = []
        return
    defined = [_defines(c.body or []) for c in turned]
    submission.problems += _missing(turned, defined, answers, printable(shown))
    submission.notes += _found_by_names(turned, defined, answers, printable(shown))
    submission.notes += _copies(turned, defined, printable(shown))
    runs = _what_runs(turned, [n for names in answers.values() for n in names])
    submission.cells[name] = setup + [(label, code) for label, code in runs if code.strip()]


def _as_python(submission: Submission, cells: list[_Cell], shown: str) -> list[_Cell] | None:
    """The cells parsed, each as IPython turns it into Python (model.jupyter) where it is not Python already
    (IPython leaves what such a cell means as it is), charged again as they turn out (the call a magic becomes
    is longer than the magic); None, with a note, when that is over the submission's limit. A cell that could
    not be turned is noted."""
    turner = jupyter.Turner(jupyter.MAX_TRANSFORM_BYTES - submission.turned_bytes)
    turned = []  # (cell, its code, why it could not be turned or "", its statements if it is Python as written)
    for cell in cells:
        body = _parse(cell.code)
        turned.append((cell, cell.code, "", body) if body is not None else (cell, *turner.python(cell.code), None))
    submission.turned_bytes += turner.used
    submission.code_bytes -= _size("".join(c.code for c in cells))
    if not _charge(submission, "".join(code for _, code, _, _ in turned), shown):
        return None
    unturned: dict[str, list[str]] = {}  # why -> the cells kept as written
    for cell, _, why, _ in turned:
        if why:
            unturned.setdefault(why, []).append(str(cell.number))
    submission.problems += [f"{printable(shown)}: {'cells' if len(numbers) > 1 else 'cell'} {_listed(_first(numbers))} "
                            f"read as plain Python, not turned as IPython turns {'them' if len(numbers) > 1 else 'it'}: "
                            f"{why}" for why, numbers in unturned.items()]
    return [_Cell(cell.label, code, cell.number, cell.grade_id, body if body is not None or why else _parse(code))
            for cell, code, why, body in turned]  # a cell kept as written does not parse: it was parsed first


def _parse(code: str) -> list[ast.stmt] | None:
    try:
        return ast.parse(code).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _missing(cells: list[_Cell], defined: list[set[str]], answers: dict[str, tuple[str, ...]], shown: str) -> list[str]:
    """A problem for each answer cell the notebook lacks: neither a cell with its grade_id nor, for one whose
    release cell defines names, cells that define them all (a notebook without nbgrader's metadata)."""
    present = {c.grade_id for c in cells}
    everything = set().union(*defined)
    return [f"{shown}: answer cell {grade_id} is missing" + (f": no cell defines {_names(names)}" if names else "")
            for grade_id, names in answers.items()
            if grade_id not in present and not (names and set(names) <= everything)]


def _found_by_names(cells: list[_Cell], defined: list[set[str]], answers: dict[str, tuple[str, ...]],
                    shown: str) -> list[str]:
    """A note, when answer cells were found by the names they define rather than by their grade_id: they are
    graded, as cells the student added are (their definitions run, and the values those use)."""
    present = {c.grade_id for c in cells}
    everything = set().union(*defined)
    found = [names for grade_id, names in answers.items()
             if grade_id not in present and names and set(names) <= everything]
    if not found:
        return []
    return [f"{shown}: {len(found)} answer cell{'s' if len(found) > 1 else ''} found by the names "
            f"{'they define' if len(found) > 1 else 'it defines'} ({_names([n for names in found for n in names])}), "
            "not by nbgrader's metadata; graded as cells you add are: their definitions run, and the values those use"]


def _copies(cells: list[_Cell], defined: list[set[str]], shown: str) -> list[str]:
    """A note for each answer cell the notebook holds more than once (copied, or split in two, which copies
    its metadata): all of them run, in order; where a name is defined again, the last definition counts."""
    by_id: dict[str, list[int]] = {}
    for i, cell in enumerate(cells):
        if cell.grade_id is not None:
            by_id.setdefault(cell.grade_id, []).append(i)
    notes = []
    for grade_id, found in by_id.items():
        if len(found) < 2:
            continue
        seen: set[str] = set()
        again: dict[str, None] = {}
        for i in found:
            again.update(dict.fromkeys(sorted(defined[i] & seen)))
            seen |= defined[i]
        note = (f"{shown}: answer cell {printable(grade_id)} appears in {len(found)} cells "
                f"(cells {_listed([str(cells[i].number) for i in found])}); all of them run, in the notebook's order")
        if again:
            note += (f", and {_names(list(again))} {'is' if len(again) == 1 else 'are'} defined in more than one: "
                     "the last definition is graded, as after Restart & Run All")
        notes.append(note)
    return notes


def _names(names: list[str] | tuple[str, ...]) -> str:
    """`a`, `b` and `c`, the first few of them."""
    return _listed(_first([f"`{printable(n, 60)}`" for n in names]))


def _first(items: list[str], most: int = 6) -> list[str]:
    """The first `most` items, then how many more there are."""
    return items[:most] + ([f"{len(items) - most} more"] if len(items) > most else [])


def _listed(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def _size(code: str) -> int:
    return len(code.encode("utf-8", errors="replace"))


def _charge(submission: Submission, code: str, shown: str) -> bool:
    """Whether `code` fits in what is left of the submission's MAX_CODE_BYTES; if not, a note says so."""
    size = _size(code)
    if submission.code_bytes + size > MAX_CODE_BYTES:
        before = f" after {submission.code_bytes:,} bytes in its other files" if submission.code_bytes else ""
        submission.problems.append(f"{printable(shown)} holds {size:,} bytes of code{before}, over the limit of "
                                   f"{MAX_CODE_BYTES:,} for a submission, {REFUSED}")
        return False
    submission.code_bytes += size
    return True


def release_cells(notebook: str, release: releases.Release | None = None) -> tuple[tuple[str, str, bool], ...]:
    """(grade_id, code, is answer cell) of the notebook `notebook` of `release` (the grader's own copy, or an
    nbgrader course's build; None: the grader's own)."""
    return _release_cells(releases.or_own(release), notebook)


@lru_cache(maxsize=8)
def _release_cells(release: releases.Release, notebook: str) -> tuple[tuple[str, str, bool], ...]:
    data = release.notebook(notebook)
    cells = _notebook_cells(data) if data is not None else None
    if cells is None:
        raise SubmissionError(f"the released notebook {notebook}.ipynb of {release.where} is missing or unreadable")
    turner = jupyter.Turner()  # a course's setup cell may hold a magic (`%matplotlib inline`)
    return tuple((grade_id, turner.python(code)[0], is_answer) for grade_id, code, is_answer in cells)


def answer_names(notebook: str, release: releases.Release | None = None) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(grade_id, the names it defines) of each answer cell of the released notebook `notebook`: what finds
    the cell in a notebook that lacks nbgrader's metadata, and what graded code reads of it."""
    return _answer_names(releases.or_own(release), notebook)


@lru_cache(maxsize=8)
def _answer_names(release: releases.Release, notebook: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    return tuple((grade_id, tuple(sorted(_defines(_parse(code) or [])))) for grade_id, code, is_answer
                 in _release_cells(release, notebook) if is_answer)


def setup_imports(release: releases.Release | None = None) -> list[str]:
    """The modules the release's setup cells import: a zygote imports them once for every sandbox."""
    found: list[str] = []
    for notebook in assignment.NOTEBOOKS:
        for grade_id, code, is_answer in release_cells(notebook, release):
            if is_answer or not grade_id.startswith(assignment.SETUP_CELL_PREFIX):
                continue
            for node in ast.walk(ast.parse(code)):
                if isinstance(node, ast.Import):
                    found += [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.append(node.module)
    return list(dict.fromkeys(found))


def public_files(release: releases.Release | None = None) -> dict[str, bytes]:
    """The public helpers of the release graded against, by file name: every sandbox finds them next to the
    code it runs."""
    files = (releases.or_own(release)).files
    return {name: files[name] for name in assignment.PUBLIC_HELPERS if name in files}


MAX_CONTAINERS = 1_000_000  # JSON objects and arrays in a notebook: a real one has a few per cell
MAX_JSON_VALUES = 2_000_000  # its strings, numbers, true, false and null: each an object or a slot once parsed
# What makes Python hold a text's every character in 4, or 2, bytes: a byte that starts a character from U+10000
# on, or from U+0100 on, and the escapes of such characters (each searched apart: a pattern that starts with a
# literal is searched for as fast as bytes are counted).
WIDE_TEXT = ((4, re.compile(rb"[\xf0-\xf4]"), re.compile(rb"\\u[dD][89abAB]")),
             (2, re.compile(rb"[\xc4-\xef]"), re.compile(rb"\\u(?!00)")))


@dataclass(frozen=True)
class NotebookCell:
    """A notebook's cell as the grader reads it, every field checked for its type."""

    number: int  # its position in the notebook, from 1
    code: bool  # a code cell
    grade_id: str | None  # its nbgrader grade_id (None: no nbgrader metadata, a cell the student added)
    answer: bool  # an autograded answer cell
    source: str | None  # its text; None where the source is not text (a number in its list of lines)


def read_notebook(data: bytes) -> list[NotebookCell] | str:
    """The cells of notebook JSON, or why it could not be read."""
    notebook = parse_notebook(data)
    return notebook if isinstance(notebook, str) else notebook_cells(notebook)


def notebook_cells(notebook: dict) -> list[NotebookCell]:
    return [_notebook_cell(number, cell) for number, cell in enumerate(notebook["cells"], start=1)]


def parse_notebook(data: bytes) -> dict | str:
    """Notebook JSON with a list of cells, or why it could not be read. Bounded before it is parsed
    (`JsonCost`: its values, its objects and arrays, its text as Python holds it), its numbers as they are
    parsed, and its nesting by json's recursion limit (RecursionError)."""
    cost = JsonCost()
    why = cost.add(data)
    if why:
        return why
    numbers = _Numbers(MAX_JSON_VALUES - cost.values)
    try:
        notebook = json.loads(data.decode("utf-8-sig"),  # a byte-order mark is read past, as editors do
                              parse_int=numbers.parse_int, parse_float=numbers.parse_float,
                              parse_constant=numbers.parse_float)
    except _TooMany:
        return cost.too_many_values
    except UnicodeDecodeError:
        return "not UTF-8 text"
    except RecursionError:
        return "nested too deeply"
    except ValueError:
        return "not valid notebook JSON"
    cells = notebook.get("cells") if type(notebook) is dict else None
    if type(cells) is not list:
        return "no list of cells"
    return notebook


class JsonCost:
    """What parsing notebook JSON would cost, counted in its bytes (as they are read, a chunk at a time)
    before anything parses them: its strings (a pair of quotes each, at most), true, false and null; its
    objects and arrays; its text as Python holds it, 1, 2 or 4 bytes a character as the widest needs (a
    `\\u` escape counted as the character it stands for). Counts only: no pattern with a quantifier runs."""

    def __init__(self) -> None:
        self.size = self.quotes = self.literals = self.containers = 0
        self.width = 1

    @property
    def values(self) -> int:
        return self.quotes // 2 + self.literals

    too_many_values = f"more than {MAX_JSON_VALUES:,} JSON values (strings, numbers, true, false and null)"

    def add(self, data: bytes) -> str | None:
        """Counts `data` in (the next chunk); why what was added so far would cost too much to parse, or None."""
        self.size += len(data)
        self.quotes += data.count(b'"')
        self.literals += data.count(b"true") + data.count(b"false") + data.count(b"null")
        self.containers += data.count(b"{") + data.count(b"[")
        for width, character, escape in WIDE_TEXT:
            if self.width < width and ((not data.isascii() and character.search(data)) or escape.search(data)):
                self.width = width
        if self.values > MAX_JSON_VALUES:
            return self.too_many_values
        if self.containers > MAX_CONTAINERS:
            return f"more than {MAX_CONTAINERS:,} JSON objects and arrays"
        if self.size * self.width > MAX_NOTEBOOK_BYTES:
            return (f"characters Python holds in {self.width} bytes each: its text would take more than "
                    f"{MAX_NOTEBOOK_BYTES:,} bytes")
        return None


class _TooMany(Exception):
    """More values than a notebook may hold, found while it is parsed (not a ValueError: json's own are)."""


class _Numbers:
    """json's hooks for numbers: each counted against what is left of MAX_JSON_VALUES as it is parsed."""

    def __init__(self, left: int) -> None:
        self.left = left

    def _count(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise _TooMany

    def parse_int(self, text: str) -> int:
        self._count()
        return int(text)

    def parse_float(self, text: str) -> float:
        self._count()
        return float(text)


def _notebook_cell(number: int, cell: object) -> NotebookCell:
    if type(cell) is not dict:
        return NotebookCell(number, False, None, False, "")
    meta = assignment.nbgrader_metadata(cell)
    if not meta:
        grade_id = None
    elif type(meta.get("grade_id")) is str:
        grade_id = meta["grade_id"]
    else:  # nbgrader's metadata without a usable id: neither an answer nor a cell the student added
        grade_id = ""
    code = cell.get("cell_type") == "code"
    return NotebookCell(number, code, grade_id, code and bool(grade_id) and assignment.is_answer_cell(cell),
                        _source(cell.get("source", "")))


def _source(source: object) -> str | None:
    """A cell's source as nbformat writes it (a string, or a list of strings), else None."""
    if type(source) is str:
        return source
    if type(source) is list and all(type(line) is str for line in source):
        return "".join(source)
    return None


def _notebook_cells(data: bytes) -> list[tuple[str, str, bool]] | None:
    """(grade_id, code, is answer cell) for each nbgrader code cell with a grade_id, or None if unreadable."""
    read = read_notebook(data)
    if isinstance(read, str):
        return None
    return [(c.grade_id, c.source or "", c.answer) for c in read if c.code and c.grade_id]


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
ASSIGNMENTS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


def _what_runs(cells: list[_Cell], graded: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The code that runs of each cell, as (label, code): an answer cell whole; of a cell the student added,
    its definitions and imports, and the assignments that code which runs reads (a constant, a helper's
    default: `NEG_INF = float("-inf")`), or that give a name the graders read (`graded`: the answer cells'
    names, `answer_q01 = "b"`), however they compute; statements that only show or test something (a print, a
    plot, an experiment whose result nothing graded reads) are blanked, lines kept."""
    trees: dict[int, list[ast.stmt]] = {}
    needed: list[str] = list(graded)  # names that code which runs reads, to be looked up
    assigning: dict[str, list[tuple[int, int]]] = {}  # name -> (cell, statement) of the added cells that assign it
    kept: set[tuple[int, int]] = set()
    for i, cell in enumerate(cells):
        if cell.grade_id is not None:
            needed += _reads(cell.body or [])
            continue
        trees[i] = cell.body or []
        for j, statement in enumerate(trees[i]):
            if isinstance(statement, DEFINITIONS):
                kept.add((i, j))
                needed += _reads([statement])
            elif isinstance(statement, ASSIGNMENTS):
                for target in _assigned(statement):
                    assigning.setdefault(target, []).append((i, j))
    looked_up: set[str] = set()
    while needed:  # each name and each statement once: linear in the code
        name = needed.pop()
        if name in looked_up:
            continue
        looked_up.add(name)
        for i, j in assigning.get(name, ()):
            if (i, j) not in kept:
                kept.add((i, j))
                needed += _reads([trees[i][j]])
    found = []
    for i, cell in enumerate(cells):
        if cell.grade_id is not None:
            found.append((cell.label, cell.code))
            continue
        lines = code_lines(cell.code)
        for j, statement in enumerate(trees[i]):
            if (i, j) not in kept:
                for k in range(statement.lineno - 1, statement.end_lineno or statement.lineno):
                    lines[k] = ""
        found.append((cell.label, "\n".join(lines) if trees[i] else ""))
    return found


def _reads(statements: list[ast.stmt]) -> list[str]:
    """The names `statements` read (a global or a local: looking up more than needed keeps more, never less)."""
    return [node.id for statement in statements for node in ast.walk(statement)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)]


def _assigned(statement: ast.Assign | ast.AnnAssign | ast.AugAssign) -> list[str]:
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return [node.id for target in targets for node in ast.walk(target) if isinstance(node, ast.Name)]


def _defines(body: list[ast.stmt]) -> set[str]:
    """The names a cell's statements define at its top level: its functions, classes, imports and assigned names."""
    names: set[str] = set()
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in statement.names)
        elif isinstance(statement, ASSIGNMENTS):
            names.update(_assigned(statement))
    return names

