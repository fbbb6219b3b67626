"""The sandbox's allow-list where the host gives no namespaces (a Docker container with its default
privileges, a Kubernetes pod as an ordinary user, a CI runner): Linux Landlock, which any process may
apply to itself (kernel 5.13 and later).

The same view as the private file system of `confinement`: the exposed folders and files read-only
(every hidden path left out, which Landlock, an allow-list, does by granting the folders around it one
by one), the devices, the sandbox's own /proc entry, and its scratch folder, where it may write into
the files it was given but create none (without a private /tmp nothing would bound how much it
writes). Where the kernel's Landlock ABI has them: no TCP (ABI 4), and no signal or abstract unix
socket to a process outside the sandbox (ABI 6), which is what keeps a sandbox that shares the
grader's uid away from the grader.

Uses landlockpy (0BSD, no dependencies, every ABI up to 11 with best-effort degradation on older
kernels, network rules and scopes), rather than `landlock` (file system only) or `py-landlock`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .policy import View, around
from .weakness import Gap, Weakness

if TYPE_CHECKING:
    from landlockpy import Ruleset

try:  # imported by the zygote, before any sandbox gives up the right to read Python's folders
    import landlockpy
except ImportError:  # the package's own dependency: missing only in a broken install
    landlockpy = None  # type: ignore[assignment]  # mypy types a module name as always bound; `abi` checks it

READ_ONLY = ("READ_FILE", "READ_DIR", "EXECUTE")
DEVICE = ("READ_FILE", "WRITE_FILE", "IOCTL_DEV")
SCRATCH = ("READ_FILE", "READ_DIR", "WRITE_FILE", "TRUNCATE")  # no MAKE_REG: the files it was given, no more


def abi() -> int:
    """The kernel's Landlock ABI version; 0 without Landlock."""
    return landlockpy.abi_version() if landlockpy is not None else 0


def prepare(view: View, scratch: str) -> tuple[Ruleset | None, list[Weakness]]:
    """The allow-list as a ruleset, not yet enforced (its paths are opened now, with the rights this
    process still has), and what it will not hold, in words."""
    version = abi()
    if version < 1:
        return None, [Weakness(Gap.NO_LANDLOCK, "no Landlock (kernel older than 5.13, or disabled): submissions can read the "
                                                "graders")]
    from landlockpy import AccessFS, AccessNet, Ruleset, Scope  # already imported: nothing is read

    def rights(names: tuple[str, ...]) -> AccessFS:
        found = AccessFS.NONE
        for name in names:
            found |= getattr(AccessFS, name, AccessFS.NONE)
        return found

    ruleset = Ruleset(handled_net=AccessNet.BIND_TCP | AccessNet.CONNECT_TCP,
                      scoped=Scope.ABSTRACT_UNIX_SOCKET | Scope.SIGNAL)
    for path in around(list(view.expose), set(view.hide)):
        if os.path.exists(path):
            ruleset.allow_path(path, rights(READ_ONLY if os.path.isdir(path) else ("READ_FILE", "EXECUTE")))
    for device in view.devices:
        if os.path.exists(device):
            ruleset.allow_path(device, rights(DEVICE))
    ruleset.allow_path(f"/proc/{os.getpid()}", rights(("READ_FILE", "READ_DIR")))
    ruleset.allow_path(scratch, rights(SCRATCH))
    weaknesses = []
    if version < 4:
        weaknesses.append(Weakness(Gap.LANDLOCK, "Landlock without network rules (kernel older than 6.7): submissions "
                                                 "can reach the network"))
    if version < 6:
        weaknesses.append(Weakness(Gap.LANDLOCK, "Landlock without signal scoping (kernel older than 6.12): submissions "
                                                 "running as your user can signal your processes"))
    return ruleset, weaknesses


def enforce(ruleset: Ruleset) -> None:
    """From now on, this process and all it starts see only what the ruleset allows."""
    ruleset.restrict()
    ruleset.close()
