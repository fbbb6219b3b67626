"""Shared by every test file: a failure is named the moment it happens.

`make test` runs quietly (-q: a dot per test) and names the failures in its closing summary; a run cut short
(a time limit, a killed terminal) never gets there. So under -q each failed test's id is also printed as it
fails, and a run stopped at any point has said which tests had failed."""

from __future__ import annotations

import pytest


@pytest.hookimpl(trylast=True)  # after the progress letter of the same report
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Print `FAILED <test id>` (or ERROR, for a setup or teardown) at once in a quiet run; with xdist this
    runs in the controller, as each worker's report arrives."""
    config = _config
    if config is None or config.get_verbosity() > 0 or not report.failed:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write("\n")  # a quiet run's progress letters have no line end of their own
        reporter.write_line(f"{'FAILED' if report.when == 'call' else 'ERROR'} {report.nodeid}")


_config: pytest.Config | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _config
    _config = config
