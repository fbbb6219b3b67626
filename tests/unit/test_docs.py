"""The README stays a short front door, and the documentation site builds (issue 48).

* README.md has at most 2,000 words;
* every relative link in README.md and docs/*.md leads to a file that exists, and a link into a Markdown
  file's heading (`page.md#heading`, or `#heading` in the same file) to a heading it has, as GitHub
  names headings;
* `mkdocs build --strict` succeeds: no broken link or anchor, no page missing from mkdocs.yml's nav.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAX_README_WORDS = 2000

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def prose(text: str) -> str:
    """The text without code blocks and inline code, where a bracket is not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {github_anchor(h) for h in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8")))}


def relative_links(path: Path) -> list[str]:
    targets = LINK.findall(prose(path.read_text(encoding="utf-8")))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]  # no http:, mailto: ...


def test_the_readme_has_at_most_2000_words():
    words = len(README.read_text(encoding="utf-8").split())  # as `wc -w` counts them
    assert words <= MAX_README_WORDS, f"README.md has {words} words; move detail into docs/"


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_leads_to_an_existing_file_and_heading(page):
    broken = []
    for target in relative_links(page):
        file_part, _, anchor = target.partition("#")
        found = (page.parent / file_part).resolve() if file_part else page
        if not found.exists():
            broken.append(f"{target}: no file {found.relative_to(ROOT) if found.is_relative_to(ROOT) else found}")
        elif anchor and found.suffix == ".md" and anchor not in anchors(found):
            broken.append(f"{target}: {found.name} has no heading #{anchor}")
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)


def test_the_readme_links_to_every_page_of_the_site():
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in relative_links(README)}
    missing = [p.name for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked and p.name != "index.md"]
    assert not missing, f"README.md's 'Where everything else is' does not link to: {missing}"


def test_the_site_builds_strictly(tmp_path):
    """Any warning fails: a broken link or anchor, a page left out of the nav (mkdocs.yml's `validation`)."""
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()


def test_the_changelogs_newest_version_is_the_packages():
    """`--version` prints the version; the changelog's first numbered heading is that version's."""
    from importlib.metadata import version

    numbered = re.findall(r"^## (\d+\.\d+\.\d+)\b", (DOCS / "changelog.md").read_text(encoding="utf-8"), re.M)
    assert numbered and numbered[0] == version("attention-exercises"), numbered
