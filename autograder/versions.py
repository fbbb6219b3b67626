"""The library versions written for: where this package replaces part of another library's code, or a
module it imports, it does so only where the installed version is the one that was written for; with
any other, the library's own code runs. docs/performance.md says what each replacement buys."""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

# As requirements.lock pins them (tests/unit/test_written_for.py checks that they agree), and
# tests/test_nbgrader_integration.py checks that with them the gradebook and autograded notebooks are
# those the libraries' own code writes. After an upgrade: read what each speed-up replaces, rerun that
# test with these updated, then update them.
WRITTEN_FOR = {"nbgrader": "0.9.6", "SQLAlchemy": "2.1.9", "jsonschema": "4.26.0", "copydetect": "0.5.0",
               "pytest": "9.2.0"}


@lru_cache(maxsize=None)
def installed(package: str) -> str | None:
    """The installed version of `package`, or None where it is not installed."""
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def patches_apply(*packages: str) -> bool:
    """Whether the installed versions of `packages` are those the speed-ups were written for."""
    return all(installed(package) == WRITTEN_FOR.get(package) for package in packages)
