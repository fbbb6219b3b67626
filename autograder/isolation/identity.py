"""What sets one run's sandboxes apart from every other run's on the same kernel. Imports nothing heavy.

A pid is unique only within its PID namespace, and containers on one host (Gradescope grades each upload
in a container of its own) number their processes alike: two containers' sandboxes had the same pids, so
the same uids. The kernel counts a uid's processes (RLIMIT_NPROC) across every container that shares the
host's user namespace, so one student's fork storm stopped the forks of a sandbox in another container.
So a sandbox's uid and a run's cgroup tree are keyed by a pid *and* the namespace it is counted in.
"""

from __future__ import annotations

import os

SANDBOX_UID_BASE = 1 << 30
PID_SPAN = 1 << 22  # above every pid (PID_MAX_LIMIT of 64-bit Linux)
NAMESPACE_SLOTS = 1 << 9  # so that the largest uid, 3 * 2**30 - 1, stays below 2**32 - 1 (no uid)


def pid_namespace() -> int:
    """This process's PID namespace, as the kernel numbers it (the inode of /proc/self/ns/pid): unique
    among the namespaces alive on this machine, and the same seen from inside any container."""
    return os.stat("/proc/self/ns/pid").st_ino


def sandbox_uid(pid: int, namespace: int) -> int:
    """The uid of the sandbox `pid` (as counted in `namespace`): no other live sandbox of this namespace has
    it, nor one of another namespace unless the two namespaces' numbers share a slot (the kernel gives live
    namespaces the lowest free numbers, so only past some five hundred namespaces alive at once)."""
    return SANDBOX_UID_BASE + (namespace % NAMESPACE_SLOTS) * PID_SPAN + pid % PID_SPAN
