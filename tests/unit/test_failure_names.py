"""A quiet run names each failure as it happens (tests/conftest.py): a run cut short, which never prints
pytest's closing summary, has still said which tests failed."""

from __future__ import annotations

from pathlib import Path

CONFTEST = (Path(__file__).resolve().parents[1] / "conftest.py").read_text(encoding="utf-8")


def test_a_run_killed_midway_has_named_its_failures(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_cut="""
        import os, signal

        def test_passes():
            pass

        def test_fails():
            assert 1 == 2

        def test_the_run_is_killed():
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    result = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider")
    assert result.ret != 0
    assert "FAILED test_cut.py::test_fails" in result.stdout.lines, result.stdout.str()
    assert "short test summary" not in result.stdout.str()  # it never got there


def test_a_verbose_run_is_left_as_pytest_prints_it(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_one="def test_fails():\n    assert False\n")
    result = pytester.runpytest_subprocess("-v", "-p", "no:cacheprovider")
    assert not [line for line in result.stdout.lines if line.startswith("FAILED test_one.py")][1:]
