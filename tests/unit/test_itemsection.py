"""The class report's section on items (reports/itemsection.py): the picture has one point per item, coloured
by part, with a text alternative; the list names the planted bad check with why; a class of one says so."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from autograder.model.results import CheckResult, GradedSubmission
from autograder.reports.classreport import class_report_html
from autograder.reports.itemsection import items_section

SVG = "{http://www.w3.org/2000/svg}"
COLORS = {"masks": "#3b74b8", "tiles": "#c62828"}


def planted_class() -> list[GradedSubmission]:
    """Six students of rising ability; tiles/planted passes exactly the two who fail every other check, and
    masks/warm-up passes everyone."""
    graded = []
    for sid, level in enumerate((0, 0, 1, 2, 3, 3)):
        checks = [CheckResult("masks", f"good{k}", 1.0, level >= k) for k in (1, 2, 3)]
        checks += [CheckResult("masks", "warm-up", 1.0), CheckResult("tiles", "planted", 2.0, level == 0)]
        graded.append(GradedSubmission(f"s{sid}", checks))
    return graded


def picture(html: str) -> ET.Element:
    return ET.fromstring(re.search(r"<svg.*?</svg>", html, re.S).group(0))


def test_the_picture_has_a_point_per_item_coloured_by_part_and_a_text_alternative():
    html = items_section(planted_class(), COLORS)
    svg = picture(html)
    assert svg.get("role") == "img" and "5 items over 6 submissions" in svg.find(f"{SVG}title").text
    points = {c.get("data-item"): c for c in svg.iter(f"{SVG}circle")}
    assert sorted(points) == ["masks/good1", "masks/good2", "masks/good3", "masks/warm-up", "tiles/planted"]
    assert points["tiles/planted"].get("fill") == COLORS["tiles"] and points["masks/good1"].get("fill") == COLORS["masks"]
    assert float(points["tiles/planted"].get("data-discrimination")) < 0
    assert points["tiles/planted"].get("stroke") == "#222"  # outlined: in the list
    assert points["masks/warm-up"].get("data-discrimination") == ""  # no spread: drawn on the line marked none
    assert all(c.find(f"{SVG}title").text.startswith(c.get("data-item")) for c in points.values())
    assert "<table id='item-stats'>" in html  # the numbers beside the picture


def test_the_list_names_the_planted_check_with_why_and_folds_away_what_everyone_passes():
    html = items_section(planted_class(), COLORS)
    listed = re.search(r"<table id='flagged-items'>.*?</table>", html, re.S).group(0)
    assert "data-item='tiles/planted'" in listed and "negative discrimination" in listed
    assert "warm-up" not in listed
    folded = re.search(r"<details id='everyone-passes'>.*?</details>", html, re.S).group(0)
    assert "masks/warm-up" in folded and "everyone passes" in folded


def test_a_class_of_one_is_told_it_has_no_item_statistics():
    html = items_section(planted_class()[:1], COLORS)
    assert "id='items-too-few'" in html and "class of one" in html and "<svg" not in html


def test_the_class_report_holds_the_section_and_links_to_it():
    page = class_report_html(planted_class())
    assert "<a href='#items'>" in page and "<h2 id='items'>" in page and "<h3 id='items-to-look-at'>" in page
