"""service.toml: what the grading service grades, where, and what students may see (docs/service.md).

Typed and strict, as the course's staff write it by hand: a key the service does not know is an error
naming it (a misspelt `atempts` must not silently leave attempts unlimited), and a value of the wrong
type or out of range is an error saying which key and what it takes. Nothing here touches the exchange.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .. import assignment

PERIODS = ("hour", "day", "week", "total")
OVER_LIMIT = ("wait", "refuse")
SHOWN = ("all", "checks", "received")  # what a student sees of a graded submission (policy.py)
MAX_CONFIG_BYTES = 64 * 2**10
MAX_SECRET_BYTES = 4096
MAX_CONCURRENT = 64


class ConfigError(ValueError):
    """service.toml cannot be used as it is: the message names the file, the key and what it takes."""


@dataclass(frozen=True)
class Policy:
    """The instructor's policy: graded attempts per period, and what a student sees before and after `due`."""

    attempts: int = 0  # graded attempts per student per period; 0: no limit
    period: str = "day"
    over_limit: str = "wait"
    due: datetime | None = None  # None: always before the due date
    before_due: str = "checks"
    after_due: str = "all"


@dataclass(frozen=True)
class ServiceConfig:
    """The [service] table: the exchange and course graded, the service's own state, who the instructors are."""

    exchange: Path
    course: str
    assignment: str
    state: Path
    secret_file: Path
    instructors: str = "instructors"
    poll_seconds: float = 1.0
    dask: str = ""
    concurrent_batches: int = 2  # batches graded at once, each in a process of its own
    student_id: str = "{name}"  # the nbgrader student id of hub user {name} (TLJH: "jupyter-{name}")
    policy: Policy = Policy()
    release: Path | None = None  # the release graded against; None: what the students fetched (`release_folder`)

    def release_folder(self) -> Path | None:
        """The release graded against: the one configured, else the exchange's outbound/<assignment>/ (what
        `nbgrader fetch_assignment` gave the students) where it holds the assignment's notebook; None where
        neither does: the package's own copy."""
        if self.release is not None:
            return self.release
        outbound = self.exchange / self.course / "outbound" / self.assignment
        return outbound if (outbound / f"{assignment.NOTEBOOKS[0]}.ipynb").is_file() else None

    def student_of(self, user: str) -> str:
        """The nbgrader student id whose submissions the hub user `user` sees."""
        return self.student_id.replace("{name}", user)

    def secret(self) -> str:
        """The hidden-input secret, read when grading starts (as `grade --secret`), never kept in the config."""
        try:
            with open(self.secret_file, "rb") as fh:
                data = fh.read(MAX_SECRET_BYTES + 1)
        except OSError as exc:
            raise ConfigError(f"secret_file {self.secret_file}: cannot read it ({exc.strerror or exc})") from None
        text = data.decode("utf-8", errors="replace").strip()
        if len(data) > MAX_SECRET_BYTES or not text:
            raise ConfigError(f"secret_file {self.secret_file}: one line of at most {MAX_SECRET_BYTES} bytes, not empty")
        return text


_SERVICE_KEYS = {"exchange", "course", "assignment", "state", "secret_file", "instructors", "poll_seconds", "dask",
                 "student_id", "release", "concurrent_batches"}
_REQUIRED = ("exchange", "course", "assignment", "state", "secret_file")
_POLICY_KEYS = {"attempts", "period", "over_limit", "due", "before_due", "after_due"}


def load(path: Path) -> ServiceConfig:
    """The configuration in `path`, checked whole; `ConfigError` names the first thing wrong."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: more than {MAX_CONFIG_BYTES:,} bytes: not a service.toml")
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    return parse(table, str(path))


def parse(table: dict[str, Any], where: str = "service.toml") -> ServiceConfig:
    """A parsed service.toml as the service's configuration (`load` reads the file)."""
    _known(table, {"service", "policy"}, where, "")
    service = table.get("service")
    if not isinstance(service, dict):
        raise ConfigError(f"{where}: a [service] table is required (exchange, course, assignment, state, secret_file)")
    policy = table.get("policy", {})
    if not isinstance(policy, dict):
        raise ConfigError(f"{where}: [policy] must be a table")
    _known(service, _SERVICE_KEYS, where, "service.")
    _known(policy, _POLICY_KEYS, where, "policy.")
    for key in _REQUIRED:
        if key not in service:
            raise ConfigError(f"{where}: service.{key} is required")
    text = {key: _text(service, key, where) for key in (*_REQUIRED, "instructors", "dask", "student_id", "release")
            if key in service}
    for key in ("course", "assignment"):
        if not text[key] or any(c in text[key] for c in "+/*\\") or text[key] in (".", ".."):
            raise ConfigError(f"{where}: service.{key} = {text[key]!r}: an nbgrader id (no '+', '/', '\\' or '*')")
    for key in ("exchange", "state", "secret_file", *(("release",) if "release" in text else ())):
        if not text[key] or not Path(text[key]).is_absolute():
            raise ConfigError(f"{where}: service.{key} = {text[key]!r}: an absolute path")
    template = text.get("student_id", "{name}")
    if template.count("{name}") != 1 or any(c in template.replace("{name}", "") for c in "+/*\\{}"):
        raise ConfigError(f"{where}: service.student_id = {template!r}: the student id with {{name}} once for the hub "
                          "user's name, e.g. \"jupyter-{name}\" (TLJH)")
    poll = service.get("poll_seconds", 1.0)
    if isinstance(poll, bool) or not isinstance(poll, (int, float)) or not 0.05 <= poll <= 3600:
        raise ConfigError(f"{where}: service.poll_seconds = {poll!r}: a number of seconds from 0.05 to 3600")
    concurrent = service.get("concurrent_batches", 2)
    if isinstance(concurrent, bool) or not isinstance(concurrent, int) or not 1 <= concurrent <= MAX_CONCURRENT:
        raise ConfigError(f"{where}: service.concurrent_batches = {concurrent!r}: a whole number of batches graded "
                          f"at once, from 1 to {MAX_CONCURRENT}")
    return ServiceConfig(exchange=Path(text["exchange"]), course=text["course"], assignment=text["assignment"],
                         state=Path(text["state"]), secret_file=Path(text["secret_file"]),
                         instructors=text.get("instructors", "instructors") or "instructors",
                         poll_seconds=float(poll), dask=text.get("dask", ""), concurrent_batches=concurrent,
                         student_id=template,
                         policy=_policy(policy, where), release=Path(text["release"]) if "release" in text else None)


def _policy(table: dict[str, Any], where: str) -> Policy:
    attempts = table.get("attempts", 0)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 0:
        raise ConfigError(f"{where}: policy.attempts = {attempts!r}: a whole number, 0 for no limit")
    chosen = {key: _choice(table, key, choices, default, where) for key, choices, default in (
        ("period", PERIODS, "day"), ("over_limit", OVER_LIMIT, "wait"),
        ("before_due", SHOWN, "checks"), ("after_due", SHOWN, "all"))}
    return Policy(attempts=attempts, due=_due(table.get("due"), where), **chosen)


def _due(value: Any, where: str) -> datetime | None:
    """An offset date-time (TOML's, or its text in ISO 8601); a time without an offset is refused, as it would
    be read in whatever zone the service's machine is in."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise ConfigError(f"{where}: policy.due = {value!r}: a date and time with its offset, "
                              "e.g. 2026-12-20T23:59:00+00:00") from None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ConfigError(f"{where}: policy.due = {value!r}: a date and time with its offset, "
                          "e.g. 2026-12-20T23:59:00+00:00")
    return value.astimezone(timezone.utc)


def _known(table: dict[str, Any], keys: set[str], where: str, prefix: str) -> None:
    unknown = sorted(set(table) - keys)
    if unknown:
        raise ConfigError(f"{where}: unknown key {prefix}{unknown[0]} (known: {', '.join(sorted(keys))})")


def _text(table: dict[str, Any], key: str, where: str) -> str:
    value = table[key]
    if not isinstance(value, str):
        raise ConfigError(f"{where}: service.{key} = {value!r}: a string")
    return value


def _choice(table: dict[str, Any], key: str, choices: tuple[str, ...], default: str, where: str) -> str:
    value = table.get(key, default)
    if value not in choices:
        raise ConfigError(f"{where}: policy.{key} = {value!r}: one of {', '.join(repr(c) for c in choices)}")
    return str(value)
