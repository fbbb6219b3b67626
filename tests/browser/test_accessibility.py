"""The reports pass axe-core's accessibility checks in a real browser.

A small class (the corpus's base.py; a copy of it, for the section of submissions unusually alike; a
crash; an off-by-one mask, swapped sin and cos, and a timer that reports the mean, for the pictures) is
graded through the command line; then Debian's Chromium, driven by playwright-core
(``accessibility.js``), opens feedback pages and the class report, runs axe-core (pinned in
``package-lock.json``, installed by npm into ``tests/browser/node_modules``) on each, and the test reads
its violations: none serious or critical (WCAG 2 AA contrast, names, structure), and none of the rules
these pages once broke (a muted text at 4.47:1, no ``<main>`` landmark, a heading level skipped).

Skipped, with the reason, where Chromium or Node.js with npm is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.browser.test_student_flow import CHROMIUM, install_playwright_core, missing_tools
from tests.test_grader_corpus import variant_module

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent / "corpus"
DRIVER = HERE / "accessibility.js"
ONCE_BROKEN = ("color-contrast", "landmark-one-main", "region", "heading-order")
CRASH = '''
def padding_mask(lengths, T):
    import os
    os._exit(1)
'''


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> Path:
    """The graded class's reports folder."""
    reason = missing_tools()
    if reason:
        pytest.skip(reason)
    install_playwright_core()
    folder = tmp_path_factory.mktemp("axe")
    base = (CORPUS / "base.py").read_text()
    students = {"base": base, "copied": base.replace("scores", "s"), "crash": base + CRASH}
    for name in ("masks_shift_tril_plus1", "positions_sin_cos_swapped", "timing_mean"):
        students[name] = variant_module(base, (CORPUS / "buggy" / f"{name}.py").read_text())
    for name, text in students.items():
        (folder / f"{name}.py").write_text(text)
    out = folder / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", *sorted(str(folder / f"{n}.py") for n in students),
         "--out", str(out), "--secret", "axe", "--parts", "masks,positions,timing", "--timeout", "10", "--quiet"],
        capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def axe(pages: list[Path], home: Path) -> list[dict]:
    """axe-core's findings on each page, as accessibility.js reports them."""
    config = {"chromium": CHROMIUM, "profile": str(home / "profile"), "out": str(home / "axe.json"),
              "pages": [page.as_uri() for page in pages]}
    (home / "config.json").write_text(json.dumps(config))
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config")}  # Chromium's own files
    proc = subprocess.run(["node", str(DRIVER), str(home / "config.json")], cwd=HERE, capture_output=True, text=True,
                          timeout=300, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((home / "axe.json").read_text())["pages"]


def summary(page: dict) -> str:
    return "\n".join(f"{v['impact']} {v['id']} ({v['help']}): {len(v['nodes'])} element(s), e.g. "
                     f"{v['nodes'][0]['target']}: {v['nodes'][0]['summary']}" for v in page["violations"])


def test_feedback_pages_and_the_class_report_pass_axe_core(reports, tmp_path):
    report = (reports / "class_report.html").read_text(encoding="utf-8")
    assert "id='similar-pairs'" in report and "<mark>" in report  # the section of copies, side by side, is there
    pages = [reports / student / "feedback.html" for student in ("base", "crash", "masks_shift_tril_plus1",
                                                                  "positions_sin_cos_swapped", "timing_mean")]
    pages.append(reports / "class_report.html")
    found = axe(pages, tmp_path)
    assert [Path(p["url"]).name for p in found] == [p.name for p in pages]
    assert all(p["version"] == json.loads((HERE / "package.json").read_text())["dependencies"]["axe-core"]
               for p in found)
    for page in found:
        serious = [v for v in page["violations"] if v["impact"] in ("serious", "critical")]
        assert not serious, f"{page['url']}:\n{summary(page)}"
        broken = [v for v in page["violations"] if v["id"] in ONCE_BROKEN]
        assert not broken, f"{page['url']}:\n{summary(page)}"
