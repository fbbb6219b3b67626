"""No two live sandboxes on one kernel share a uid, also across containers (PID namespaces that number
their processes alike): the kernel counts a uid's processes across all of them, so a shared uid let one
student's fork storm stop another's forks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from autograder.isolation import identity

ROOT_NAMESPACE = 4026531836  # the host's own PID namespace, as Linux numbers it
FIRST_DYNAMIC = 0xF0000000  # where the numbers of every other namespace start


def test_the_same_pid_in_two_namespaces_is_two_uids():
    for a, b in ((ROOT_NAMESPACE, FIRST_DYNAMIC + 7), (FIRST_DYNAMIC + 7, FIRST_DYNAMIC + 8)):
        assert identity.sandbox_uid(20, a) != identity.sandbox_uid(20, b)


def test_within_a_namespace_each_pid_is_its_own_uid_and_every_uid_is_valid():
    for namespace in (ROOT_NAMESPACE, FIRST_DYNAMIC, FIRST_DYNAMIC + identity.NAMESPACE_SLOTS - 1):
        uids = [identity.sandbox_uid(pid, namespace) for pid in (1, 2, 300, identity.PID_SPAN - 1)]
        assert len(set(uids)) == len(uids)
        assert all(2**30 <= uid < 2**32 - 1 for uid in uids)


UID_IN_A_CONTAINER = ("import os, sys; from autograder.isolation import identity as i; "
                      "print(i.sandbox_uid(int(os.readlink('/proc/self')), i.pid_namespace()), flush=True); "
                      "sys.stdin.read()")


def test_two_containers_alive_at_once_give_their_first_process_two_uids():
    """As two containers do: each a PID namespace of its own with its own /proc, where the first process is pid 1
    (both alive at once: a namespace's number may be given again once it has gone)."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("needs root and unshare(1) to make PID namespaces")
    command = ["unshare", "--fork", "--pid", "--mount-proc", sys.executable, "-c", UID_IN_A_CONTAINER]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    containers = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
                  for _ in range(2)]
    try:
        uids = [container.stdout.readline().strip() for container in containers]
    finally:
        for container in containers:
            container.communicate("", timeout=60)
    assert all(uids) and uids[0] != uids[1], uids
