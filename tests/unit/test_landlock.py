"""Landlock's ruleset (autograder/isolation/landlock.py), the sandbox's view where the host gives no
namespaces: the rules it computes from a View, checked against a recording stand-in for landlockpy's
Ruleset on any machine, then what a child process under the real ruleset can and cannot do where the
kernel has Landlock."""

from __future__ import annotations

import errno
import os
import socket
from pathlib import Path

import pytest

from autograder.isolation import landlock
from autograder.isolation.policy import View
from autograder.isolation.weakness import Gap, Weakness

landlockpy = pytest.importorskip("landlockpy", reason="landlockpy (a dependency of the package) is not installed")
from landlockpy import AccessFS, AccessNet, Scope  # noqa: E402 - after the skip above

READ_ONLY = AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.EXECUTE


class Recorded:
    """Stands for landlockpy.Ruleset: keeps what prepare() asks of it, enforces nothing."""

    def __init__(self, **handled: object) -> None:
        self.handled = handled
        self.rules: dict[str, AccessFS] = {}

    def allow_path(self, path: str, access: AccessFS) -> None:
        assert path not in self.rules, f"{path} granted twice"
        self.rules[path] = access


def _tree(root: Path) -> dict[str, Path]:
    """A shared folder holding a file anyone may read and a folder that must stay hidden, plus a lone file,
    a device-like file and a scratch folder."""
    (root / "shared" / "open").mkdir(parents=True)
    (root / "shared" / "open" / "module.py").write_text("x = 1\n")
    (root / "shared" / "notes.txt").write_text("public\n")
    (root / "shared" / "hidden").mkdir()
    (root / "shared" / "hidden" / "key.py").write_text("SECRET = 1\n")
    (root / "alone.txt").write_text("alone\n")
    (root / "device").write_text("")
    (root / "scratch").mkdir()
    (root / "scratch" / "given.txt").write_text("")
    return {name: root / path for name, path in (
        ("shared", "shared"), ("open", "shared/open"), ("notes", "shared/notes.txt"), ("hidden", "shared/hidden"),
        ("key", "shared/hidden/key.py"), ("alone", "alone.txt"), ("device", "device"), ("scratch", "scratch"),
        ("given", "scratch/given.txt"))}


def _view(paths: dict[str, Path], root: Path) -> View:
    return View(expose=(str(paths["shared"]), str(paths["alone"]), str(root / "missing")),
                hide=(str(paths["hidden"]),), devices=(str(paths["device"]), str(root / "no-such-device")))


def _recorded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, version: int) -> tuple[Recorded, list[str], dict]:
    """prepare() on the test tree, on a kernel of Landlock ABI `version`, with the ruleset recorded."""
    monkeypatch.setattr(landlock, "abi", lambda: version)
    monkeypatch.setattr(landlockpy, "Ruleset", Recorded)
    paths = _tree(tmp_path)
    ruleset, weaknesses = landlock.prepare(_view(paths, tmp_path), str(paths["scratch"]))
    return ruleset, weaknesses, paths


def test_the_rules_grant_the_view_read_only_and_around_what_it_hides(monkeypatch, tmp_path):
    """The hidden folder's parent is granted child by child, never as a whole: an allow-list grants all beneath."""
    ruleset, _, paths = _recorded(monkeypatch, tmp_path, 6)
    rules = ruleset.rules
    assert rules[str(paths["open"])] == READ_ONLY
    assert rules[str(paths["notes"])] == AccessFS.READ_FILE | AccessFS.EXECUTE
    assert rules[str(paths["alone"])] == AccessFS.READ_FILE | AccessFS.EXECUTE
    hidden = paths["hidden"]
    reaching = [g for g in rules if Path(g) == hidden or Path(g) in hidden.parents or hidden in Path(g).parents]
    assert reaching == []  # neither the hidden folder, nor what it holds, nor a folder around it
    assert str(tmp_path / "missing") not in rules and str(tmp_path / "no-such-device") not in rules


def test_the_rules_give_devices_proc_and_scratch_their_own_rights_and_nothing_more(monkeypatch, tmp_path):
    ruleset, _, paths = _recorded(monkeypatch, tmp_path, 6)
    rules = ruleset.rules
    assert rules[str(paths["device"])] == AccessFS.READ_FILE | AccessFS.WRITE_FILE | AccessFS.IOCTL_DEV
    assert rules[f"/proc/{os.getpid()}"] == AccessFS.READ_FILE | AccessFS.READ_DIR
    scratch = rules[str(paths["scratch"])]
    assert scratch == AccessFS.READ_FILE | AccessFS.READ_DIR | AccessFS.WRITE_FILE | AccessFS.TRUNCATE
    assert not scratch & (AccessFS.MAKE_REG | AccessFS.REMOVE_FILE | AccessFS.EXECUTE)  # writes what it was given
    assert set(rules) == {str(paths[name]) for name in ("open", "notes", "alone", "device", "scratch")} | {
        f"/proc/{os.getpid()}"}
    assert not any(access & AccessFS.MAKE_REG for access in rules.values())


def test_tcp_is_handled_with_no_port_allowed_and_signals_and_abstract_sockets_are_scoped(monkeypatch, tmp_path):
    ruleset, _, _ = _recorded(monkeypatch, tmp_path, 6)
    assert ruleset.handled == {"handled_net": AccessNet.BIND_TCP | AccessNet.CONNECT_TCP,
                               "scoped": Scope.ABSTRACT_UNIX_SOCKET | Scope.SIGNAL}


@pytest.mark.parametrize("version, told", [
    (3, ["without network rules", "without signal scoping"]),
    (5, ["without signal scoping"]),
    (6, []),
])
def test_what_an_older_abi_cannot_hold_is_said(monkeypatch, tmp_path, version, told):
    _, weaknesses, _ = _recorded(monkeypatch, tmp_path, version)
    assert len(weaknesses) == len(told) and all(t in w.text for t, w in zip(told, weaknesses))
    assert all(w.gap is Gap.LANDLOCK for w in weaknesses)


def test_without_landlock_there_is_no_ruleset_and_the_weakness_is_said(monkeypatch, tmp_path):
    monkeypatch.setattr(landlock, "abi", lambda: 0)
    ruleset, weaknesses = landlock.prepare(View((str(tmp_path),), (), ()), str(tmp_path))
    assert ruleset is None and weaknesses == [
        Weakness(Gap.NO_LANDLOCK, "no Landlock (kernel older than 5.13, or disabled): submissions can read the graders")]


# ---------------------------------------------------------------- under the kernel's Landlock

needs_landlock = pytest.mark.skipif(landlock.abi() < 1, reason="this kernel has no Landlock (5.13 or later, enabled)")


def _under(tmp_path: Path, attempt) -> landlockpy.testing.ProbeResult:
    """`attempt` run in a forked child under the real ruleset of the test tree (this process stays free)."""
    from landlockpy.testing import probe

    paths = _tree(tmp_path)
    ruleset, _ = landlock.prepare(_view(paths, tmp_path), str(paths["scratch"]))
    try:
        return probe(ruleset, lambda: attempt(paths))
    finally:
        ruleset.close()


@needs_landlock
def test_a_child_under_the_ruleset_reads_what_is_exposed_and_writes_what_it_was_given(tmp_path):
    def allowed(paths: dict[str, Path]) -> None:
        assert paths["open"].joinpath("module.py").read_text() == "x = 1\n"
        assert paths["notes"].read_text() == "public\n"
        paths["given"].write_text("answer\n")

    result = _under(tmp_path, allowed)
    assert result.ok, result
    assert (tmp_path / "scratch" / "given.txt").read_text() == "answer\n"


@needs_landlock
@pytest.mark.parametrize("attempt", [
    lambda paths: paths["key"].read_text(),  # within the hidden folder
    lambda paths: os.listdir(paths["shared"]),  # the folder around it is not granted as a whole
    lambda paths: paths["scratch"].joinpath("new.txt").write_text("x"),  # scratch: no new files
    lambda paths: paths["alone"].write_text("x"),  # exposed is read-only
], ids=["hidden file", "folder around it", "new scratch file", "write exposed"])
def test_a_child_under_the_ruleset_is_refused_the_rest(tmp_path, attempt):
    result = _under(tmp_path, attempt)
    assert not result.ok and result.errno == errno.EACCES, result


@pytest.mark.skipif(landlock.abi() < 4, reason="this kernel's Landlock has no network rules (ABI 4, Linux 6.7)")
def test_a_child_under_the_ruleset_cannot_connect_over_tcp(tmp_path):
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    try:
        result = _under(tmp_path, lambda paths: socket.create_connection(("127.0.0.1", port), timeout=5).close())
    finally:
        listener.close()
    assert not result.ok and result.errno == errno.EACCES, result
