"""Pictures in the reports, on made-up results: the figure data the graders make (engine.figures,
engine.checks), how reports/figures.py draws it, the bounds that keep a feedback page small and fast,
what the class report counts, and the pictures in the grade cells of nbgrader's autograded notebooks.

The helpers at the top (an element tree from html.parser, our heatmaps' PNG cells) serve
test_reports_visual.py too.
"""

from __future__ import annotations

import base64
import json
import struct
import time
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass, field
from html.parser import HTMLParser

import pytest
import torch

from autograder.engine import figures
from autograder.engine.checks import Failure, expect, expect_close
from autograder.model.results import CheckResult, GradedSubmission
from autograder.isolation.protocol import RAN_OUT_OF_MEMORY
from autograder.reports import classreport
from autograder.reports.feedback import MAX_PAGE_FIGURES, feedback_html
from autograder.reports.figures import FALSE_COLOR, TRUE_COLOR, figure_html, figure_svg, figure_text

# ---------------------------------------------------------------- reading our HTML back

VOID = {"meta", "br", "img", "input", "link", "hr", "source", "col"}


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    children: list = field(default_factory=list)
    parent: "Element | None" = None

    def iter(self, tag: str | None = None, **attrs: str):
        """This element and those below it with `tag` and the attribute values given (class_: one of its
        classes; data_cells: data-cells), in document order."""
        stack = [self]
        while stack:
            node = stack.pop(0)
            if (tag is None or node.tag == tag) and all(_matches(node, k, v) for k, v in attrs.items()):
                yield node
            stack[0:0] = [c for c in node.children if isinstance(c, Element)]

    def find(self, tag: str | None = None, **attrs: str) -> "Element | None":
        return next(self.iter(tag, **attrs), None)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def own_text(self) -> str:
        return "".join(c for c in self.children if isinstance(c, str))


def _matches(node: Element, key: str, value: str) -> bool:
    if key == "class_":
        return value in node.attrs.get("class", "").split()
    return node.attrs.get(key.replace("_", "-")) == value


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.current = Element("#root", {})

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {k: v or "" for k, v in attrs}, parent=self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, {k: v or "" for k, v in attrs}, parent=self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(text: str) -> Element:
    builder = _Builder()
    builder.feed(text)
    builder.close()
    return builder.root


def cells_of_runs(runs: str) -> set[tuple[int, int]]:
    """The cells of a marks path's data-cells: "row:first-last ..."."""
    cells = set()
    for run in runs.split():
        row, _, span = run.partition(":")
        first, _, last = span.partition("-")
        cells.update((int(row), j) for j in range(int(first), int(last) + 1))
    return cells


def png_pixels(uri: str) -> tuple[int, int, list[bytes], list[tuple[int, ...]]]:
    """(width, height, rows of palette indices, palette) of a data: URI of an 8-bit palette PNG."""
    data = base64.b64decode(uri.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        tag, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        assert struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0] == zlib.crc32(tag + body)
        chunks[tag] = chunks.get(tag, b"") + body
        pos += 12 + length
    width, height, depth, color = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, color) == (8, 3)
    raw = zlib.decompress(chunks[b"IDAT"])
    rows = [raw[r * (width + 1):(r + 1) * (width + 1)] for r in range(height)]
    assert all(row[0] == 0 for row in rows)
    palette = [tuple(chunks[b"PLTE"][i:i + 3]) for i in range(0, len(chunks[b"PLTE"]), 3)]
    return width, height, [row[1:] for row in rows], palette


def cell_colors(uri: str, rows: int, columns: int) -> list[list[tuple[int, ...]]]:
    """The color of each cell of a heatmap of rows x columns cells (its top-left pixel)."""
    width, height, pixels, palette = png_pixels(uri)
    size = width // columns
    assert (width, height) == (columns * size, rows * size)
    return [[palette[pixels[i * size][j * size]] for j in range(columns)] for i in range(rows)]


def grid_panels(figure_element: Element) -> list[tuple[str, set[tuple[int, int]]]]:
    """(the heatmap's data: URI, the outlined cells) of each panel of a drawn grid: expected, then yours."""
    images = list(figure_element.iter("image"))
    marks = list(figure_element.iter("path", class_="marks"))
    return [(image.attrs["href"], cells_of_runs(mark.attrs["data-cells"]) if mark else set())
            for image, mark in zip(images, marks or [None] * len(images))]


# ---------------------------------------------------------------- the data the graders make


def off_by_one(T: int) -> tuple[torch.Tensor, torch.Tensor]:
    ones = torch.ones(T, T, dtype=torch.bool)
    return ones.tril(), ones.tril(1)


def test_grid_of_an_off_by_one_mask_lists_the_cells_above_the_diagonal():
    want, got = off_by_one(6)
    fig = figures.grid("causal_mask(6)", want, got, rows="query i", cols="key j", meaning=("may attend", "blocked"))
    assert fig["values"] == "bool" and fig["offset"] == [0, 0] and fig["shape"] == [6, 6]
    assert fig["differ"] == [[i, i + 1, i + 1] for i in range(5)]  # runs: row, first column, last column
    assert fig["differ_total"] == 5 and fig["total"] == 36
    assert fig["expected"][0] == [1, 0, 0, 0, 0, 0] and fig["got"][0] == [1, 1, 0, 0, 0, 0]
    json.dumps(fig, allow_nan=False)  # strict JSON: results.json is read by Gradescope


def test_grid_is_bounded_and_shows_the_worst_slice():
    want = torch.zeros(2, 3, 40, 50)
    got = want.clone()
    got[1, 2, 35, 45] = 7.0  # the one difference, far from the start
    fig = figures.grid("x", want, got, atol=1e-5)
    assert fig["index"] == [1, 2] and fig["shape"] == [40, 50]
    assert len(fig["expected"]) == figures.GRID_MAX and all(len(r) == figures.GRID_MAX for r in fig["got"])
    r0, c0 = fig["offset"]
    assert [(r0 + i, c0 + j) for i, j in figures.cells(fig["differ"])] == [(35, 45)]
    got[1, 2, 3, 4] = 1.0  # a difference near the start: the window starts there
    assert figures.grid("x", want, got, atol=1e-5)["offset"] == [0, 0]


def test_non_finite_numbers_are_strings_and_numbers_are_rounded():
    fig = figures.grid("x", torch.tensor([[1.0, 2.0]]), torch.tensor([[float("nan"), 1 / 3]]))
    assert fig["got"] == [["nan", 0.3333]]
    fig = figures.entries("x", torch.tensor([0.0, 1.0, 2.0]), torch.tensor([0.0, float("inf"), 2.5]))
    assert fig["rows"] == [["[1]", 1.0, "inf", "inf"], ["[2]", 2.0, 2.5, 0.5]]
    json.dumps(fig, allow_nan=False)


def test_expect_close_attaches_a_grid_or_the_worst_entries_and_keeps_its_message():
    with pytest.raises(Failure) as grid_failure:
        expect_close(torch.eye(3), torch.ones(3, 3), "f(3)", axes=("query i", "key j"))
    (fig,) = grid_failure.value.figures
    assert fig["kind"] == "grid" and fig["rows"] == "query i" and len(figures.cells(fig["differ"])) == 6
    assert str(grid_failure.value).startswith("Checked: f(3)\nExpected: value 1 at [0, 1]")
    with pytest.raises(Failure) as entries_failure:
        expect_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 3.0]), "g()")
    assert [f["kind"] for f in entries_failure.value.figures] == ["entries"]
    with pytest.raises(Failure) as bool_failure:
        expect_close(*reversed(off_by_one(4)), "causal_mask(4)")
    assert bool_failure.value.figures[0]["values"] == "bool"


def test_a_picture_that_cannot_be_made_changes_nothing():
    with pytest.raises(Failure) as failure:
        expect(False, "c", "e", "g", "h", lambda: [1 / 0])
    assert str(failure.value) == "Checked: c\nExpected: e\nGot: g\nLikely mistake: h" and failure.value.figures == []
    expect(True, "c", "e", "g", "h", lambda: [1 / 0])  # made only on failure


# ---------------------------------------------------------------- drawing


def test_a_drawn_grid_outlines_exactly_the_differing_cells_and_colors_its_cells():
    want, got = off_by_one(7)
    fig = figures.grid("causal_mask(7)", want, got, meaning=("may attend", "blocked"))
    element = parse(figure_html(fig)).find("figure")
    assert element.attrs["data-kind"] == "grid"
    (expected_uri, expected_marks), (got_uri, got_marks) = grid_panels(element)
    assert expected_marks == got_marks == {(i, i + 1) for i in range(6)}
    expected, yours = cell_colors(expected_uri, 7, 7), cell_colors(got_uri, 7, 7)
    assert expected[0][1] == FALSE_COLOR and yours[0][1] == TRUE_COLOR and expected[3][3] == yours[3][3] == TRUE_COLOR
    assert "6 of 49 cells differ" in element.find("figcaption").text()
    table = element.find("table").text()
    assert "[0, 1]" in table and "False" in table and "True" in table  # the numbers, readable without the picture


def test_a_standalone_svg_is_well_formed_and_has_a_text_alternative():
    fig = figures.grid("w", torch.rand(5, 8), torch.rand(5, 8))
    svg = figure_svg(fig, heading="scaling/attention_weights: values")
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and root.find("{http://www.w3.org/2000/svg}title").text
    assert "cells differ" in figure_text(fig)
    assert figure_svg({"kind": "entries", "rows": []}) is None


def test_broken_figures_are_left_out_not_errors():
    for broken in ({}, {"kind": "grid"}, {"kind": "grid", "expected": [[1]], "got": [[1, 2]]}, {"kind": "loglog"},
                   {"kind": "calls", "seconds": []}, {"kind": "unknown"}, "not a dict", None):
        assert figure_html(broken) == "" and figure_svg(broken) is None


def test_a_study_on_log_log_axes_draws_its_points_the_guide_and_the_allowed_ranges():
    fig = figures.loglog("time_attention", [200, 400, 800], {"your times": [0.002, 0.003, 0.004]},
                         allowed=[(0.0019, 0.0025), (0.0079, 0.0085), (0.031, 0.033)])
    element = parse(figure_html(fig)).find("figure")
    assert len(list(element.iter("circle", class_="point"))) == 3
    assert len(list(element.iter("rect", class_="allowed"))) == 3
    assert element.find("line", class_="guide") is not None
    caption = element.find("figcaption").text()
    assert "T^0.50" in caption and "slope 2" in caption


def test_a_timers_calls_are_drawn_with_what_it_reported():
    fig = figures.calls("time_call", [0.1, 0.001, 0.001, 0.1, 0.001, 0.001], [False] + [True] * 5, 0.0208,
                        (0.0009, 0.0012))
    element = parse(figure_html(fig)).find("figure")
    assert len(list(element.iter("rect", class_="call"))) == 6 and element.find("line", class_="yours") is not None
    assert "median is 1 ms, their mean 20.8 ms; you reported 20.8 ms" in element.find("figcaption").text()


# ---------------------------------------------------------------- a page stays small and fast


def worst_case_submission(checks: int = 40) -> GradedSubmission:
    """Every check failed with three of the largest pictures, every cell different."""
    gen = torch.Generator().manual_seed(0)
    results = []
    for k in range(checks):
        pictures = [figures.grid(f"f{k}", torch.randn(30, 30, generator=gen), torch.randn(30, 30, generator=gen))
                    for _ in range(3)]
        results.append(CheckResult("scaling", f"check {k}", 1.0, False, ["Checked: ...\nLikely mistake: x"],
                                   figures=json.loads(json.dumps(pictures))))
    return GradedSubmission("worst", results)


def test_a_feedback_page_is_bounded_in_size_and_cheap_to_write():
    graded = worst_case_submission()
    start = time.process_time()  # the CPU it takes: a busy machine's wait is not the page's
    page = feedback_html(graded)
    seconds = time.process_time() - start
    assert len(page.encode()) < 300_000, len(page)
    assert page.count("<figure") == MAX_PAGE_FIGURES and "more picture(s) left out" in page
    assert seconds < 2.0, seconds  # 24 of the largest pictures; a real page has a few (a few ms)
    assert "http" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing fetched


# ---------------------------------------------------------------- the class report counts


def result(part: str, name: str, output: str = "", passed: bool = False, hint: str = "", trouble: str = "") -> CheckResult:
    return CheckResult(part, name, 1.0, passed, [] if passed else [output], hint=hint, trouble=trouble)


def test_mistakes_are_counted_once_per_student_and_part_with_their_ids():
    off = "Checked: c\nExpected: e\nGot: g\nLikely mistake: off by one"
    graded = [GradedSubmission("b", [result("masks", "one", off, hint="off by one"),
                                     result("masks", "two", off, hint="off by one")]),
              GradedSubmission("a", [result("masks", "one", off, hint="off by one"),
                                     result("scaling", "three", off, hint="off by one")]),
              GradedSubmission("c", [result("masks", "one", passed=True)])]
    found = [(m.part, m.hint, m.students, m.checks) for m in classreport.diagnosed_mistakes(graded)]
    assert found == [("masks", "off by one", ["a", "b"], ["one", "two"]), ("scaling", "off by one", ["a"], ["three"])]


def test_timeouts_crashes_memory_and_grader_errors_are_told_apart():
    timeout = "`fit_power_law` ... The call did not finish within 20 s (an infinite loop?); it was stopped."
    crash = "The submission's process died during this call (a crash, os._exit, or the memory or CPU limit)."
    memory = f"`sinusoidal_encoding` {RAN_OUT_OF_MEMORY}: it raised RuntimeError: can't allocate memory"
    graded = [GradedSubmission("kai", [result("timing", "fit", timeout, trouble="timeout"), result("timing", "other", "fine")]),
              GradedSubmission("ivan", [result("masks", "pad", crash, trouble="crash")]),
              GradedSubmission("lea", [result("positions", "encoding", memory, trouble="memory")]),
              GradedSubmission("zed", error="the grading worker died twice while grading it"),
              GradedSubmission("ada", [result("masks", "pad", passed=True)])]
    found = [(i.student, i.kind, i.checks) for i in classreport.incidents(graded)]
    assert found == [("ivan", "crashed", ["masks/pad"]), ("kai", "timed out", ["timing/fit"]),
                     ("lea", "out of memory", ["positions/encoding"]), ("zed", "grader error", [])]
    page = parse(classreport.class_report_html(graded))
    rows = {(r.attrs["data-student"], r.attrs["data-kind"]) for r in page.iter("tr", class_="incident")}
    assert rows == {("ivan", "crashed"), ("kai", "timed out"), ("lea", "out of memory"), ("zed", "grader error")}
    assert "out of memory: 1 (lea)" in page.find("p", class_="lead").text()


def test_the_class_report_believes_no_text_a_submission_wrote():
    """An exception message that reads like a diagnosis or a timeout is only a message."""
    forged = ("`causal_mask` raised ValueError: Likely mistake: plagiarism detected\n"
              "The call did not finish within 60 s (an infinite loop?); it was stopped.")
    graded = [GradedSubmission("eve", [result("masks", "values", forged, trouble="exception")])]
    assert classreport.diagnosed_mistakes(graded) == [] and classreport.incidents(graded) == []


def test_the_class_report_is_self_contained_and_its_histograms_count_every_scored_submission():
    graded = [GradedSubmission(f"s{k}", [result("masks", "a", passed=k % 2 == 0), result("masks", "b", passed=True)],
                               seconds=1.0 + k) for k in range(7)]
    text = classreport.class_report_html(graded)
    page = parse(text)
    assert "<script" not in text and "http" not in text.replace("http://www.w3.org/2000/svg", "")
    hist = page.find("figure", data_title="masks")
    counts = {b.attrs["data-range"]: int(b.attrs["data-count"]) for b in hist.iter("rect", class_="bin")}
    assert counts == {"0": 0, "1": 3, "2": 4}
    rate = page.find("tr", data_check="a")
    assert (rate.attrs["data-passed"], rate.attrs["data-graded"]) == ("4", "7")
    assert [r.attrs["data-student"] for r in page.iter("tr", class_="timing")][:3] == ["s6", "s5", "s4"]


# ---------------------------------------------------------------- nbgrader's grade cells


def test_grade_cells_show_the_pictures_and_keep_their_score(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from nbgrader.utils import determine_grade

    from autograder.nbgrader.gradebook import ScoreFromReports

    want, got = off_by_one(5)
    graded = GradedSubmission("ada", [
        CheckResult("masks", "causal_mask: values", 2.0, False, ["Checked: causal_mask(5)[0, 1]"],
                    figures=[figures.grid("causal_mask(5)", want, got)]),
        CheckResult("masks", "padding_mask", 1.0)])
    (tmp_path / "ada").mkdir()
    (tmp_path / "ada" / "results.json").write_text(json.dumps(graded.to_gradescope()))
    cell = nbformat.v4.new_code_cell("grade_part('masks')", metadata={"nbgrader": {
        "grade": True, "solution": False, "grade_id": "grade-masks", "points": 3.0, "locked": True}})
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb, _ = ScoreFromReports(reports=str(tmp_path)).preprocess(nb, {"nbgrader": {"student": "ada"}})
    outputs = nb.cells[0].outputs
    assert [o.output_type for o in outputs] == ["stream", "display_data", "execute_result"]
    svg = outputs[1].data["image/svg+xml"]
    ET.fromstring(svg)
    assert "masks/causal_mask: values" in svg and outputs[1].data["text/plain"].startswith("[picture]")
    assert determine_grade(nb.cells[0]) == (1.0, 3.0)  # the execute_result's score, as without pictures


# ---------------------------------------------------------------- issue 20: what a new student and instructor meet


def test_a_feedback_page_opens_with_the_total_and_each_parts_score_and_its_one_mistake():
    convention = "this contract uses True = may attend"
    graded = GradedSubmission("cleo", [
        result("masks", "causal_mask: diagonal", "Checked: c\nLikely mistake: " + convention, hint=convention),
        result("masks", "causal_mask: values", "Checked: c\nLikely mistake: " + convention, hint=convention),
        result("masks", "padding_mask", passed=True),
        CheckResult("quiz", "q01: the right option", 1.0, True), CheckResult("quiz", "q02: the right option", 1.0, False,
                                                                           ["Got: not answered"], hint="not attempted"),
        CheckResult("timing", "time_call", 2.0, False, ["`time_call` is not implemented yet"], trouble="not_implemented")])
    page = parse(feedback_html(graded))
    assert page.find("p", class_="total").text() == "Total: 2 / 7 points"  # from the results: never a fixed maximum
    summary = {r.find("td").text(): [td.text() for td in r.iter("td")][1:] for r in page.find("table", class_="parts").iter("tr")
               if r.find("td") is not None}
    assert summary["masks"] == ["1 / 3", f"2 checks failed; likely mistake: {convention}"]
    assert summary["quiz"] == ["1 / 2", "1 check failed; 1 not attempted yet"]
    assert summary["timing"] == ["0 / 2", "not attempted yet"]
    masks = page.find("h2", id="part-masks")
    assert masks.text() == "masks: 1 / 3 points"
    said = [p.text() for p in page.iter("p", class_="mistake")]
    assert said == [f"Likely mistake: {convention} (named by 2 failed checks below)"]  # once, not per check only


def test_a_full_marks_page_says_so_at_once_and_folds_its_checks_away():
    graded = GradedSubmission("ada", [CheckResult(part, f"check {k}", 2.0 if k else 1.0) for part in ("masks", "quiz")
                                      for k in range(40)])
    text = feedback_html(graded)
    page = parse(text)
    assert page.find("p", class_="total").text().startswith(f"Full marks: {graded.max_score:g} / {graded.max_score:g} points.")
    assert text.index("Full marks") < text.index("<h2")
    assert all(li.parent.parent.tag == "details" for li in page.iter("li"))  # 80 green lines, folded under their part


def test_the_class_report_counts_what_was_left_as_released_apart_from_mistakes():
    wrong = "run the check cell under the question for an explanation"
    graded = [GradedSubmission("ann", [result("quiz", "q01", hint="not attempted"), result("quiz", "q02", hint="not attempted")]),
              GradedSubmission("bob", [result("quiz", "q01", "wrong", hint=wrong), result("quiz", "q02", hint="not attempted")]),
              GradedSubmission("cy", [result("masks", "causal_average", trouble="not_implemented"),
                                      result("masks", "causal_mask", hint="a token may attend to itself")])]
    found = [(m.part, m.hint, m.students) for m in classreport.diagnosed_mistakes(graded)]
    assert found == [("masks", "a token may attend to itself", ["cy"]), ("quiz", wrong, ["bob"])]
    untouched = [(i.part, i.checks, i.students) for i in classreport.not_attempted(graded)]
    assert untouched == [("masks", ("causal_average",), ["cy"]), ("quiz", (), ["ann"]), ("quiz", ("q02",), ["bob"])]
    line = parse(classreport.class_report_html(graded)).find("p", id="not-attempted").text()
    assert line.startswith("Not attempted (left as released: not counted as mistakes): masks: causal_average: 1 (cy)")
    assert "quiz (the whole part): 1 (ann); quiz: q02: 1 (bob)" in line


def test_the_pass_rate_bars_share_a_left_edge():
    graded = [GradedSubmission(f"s{k}", [result("masks", "a", passed=k < 1), result("masks", "b", passed=k < 9)])
              for k in range(10)]
    text = classreport.class_report_html(graded)
    cells = [r.iter("td") for r in parse(text).iter("tr", class_="rate")]
    bars = [list(row)[-1] for row in cells]
    assert all(cell.attrs["class"] == "rate-cell" and cell.children[0].attrs["class"] == "bar" for cell in bars)
    assert "td.rate-cell{white-space:nowrap;text-align:left}" in text  # the bar first, at the cell's left edge


def test_a_cut_grid_gives_the_same_counts_in_its_caption_and_its_table():
    want = torch.zeros(2, 29, 10)
    got = want.clone()
    got[0] += torch.arange(290.0).reshape(29, 10) + 1  # slice 0 all wrong, the furthest off at its end
    fig = figures.grid("the attention weights, reference weights loaded", want, got, atol=1e-5)
    element = parse(figure_html(json.loads(json.dumps(fig)))).find("figure")
    caption = element.find("figcaption").text()
    assert caption.startswith("the attention weights, reference weights loaded, at [0, :, :]: expected (left)")
    assert "290 of 290 cells differ (290 of 580 entries in the whole result)" in caption
    assert "showing rows 0–23 and columns 0–9 of 29 × 10, where 240 of the 240 cells shown differ (outlined)" in caption
    details = element.find("details")
    assert details.find("summary").text() == "The differing cells (the furthest off 8 of the 290)"
    assert [tr.find("td").text() for tr in details.iter("tr") if tr.find("td")][:2] == ["[28, 9]", "[28, 8]"]  # past row 23


def test_a_study_caption_names_each_guide_as_it_is_drawn():
    fig = figures.loglog("fit_power_law", [16, 64, 256], {"times": [1e-4, 2e-4, 4e-4]},
                         guides={"slope 2 (the least-squares fit)": 2.0, "your slope 0.5": 0.5})
    caption = parse(figure_html(fig)).find("figcaption").text()
    assert "(the dashed line: slope 2; the dotted line: slope 0.5)" in caption


def test_pictures_in_grade_cells_have_alternative_text_in_nbgraders_feedback(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    from nbconvert import HTMLExporter

    from autograder.nbgrader.gradebook import figure_outputs

    want, got = off_by_one(5)
    check = CheckResult("masks", "causal_mask: values", 2.0, False, ["Checked: causal_mask(5)[0, 1]"],
                        figures=[figures.grid("causal_mask(5)", want, got)])
    (output,) = figure_outputs("masks", [check])
    block = parse(output.data["text/html"])
    svg = block.find("svg")
    assert svg.attrs["role"] == "img" and "4 of 25 cells differ" in svg.attrs["aria-label"]
    assert "4 of 25 cells differ" in block.find("figcaption").text()
    cell = nbformat.v4.new_code_cell("grade_part('masks')", outputs=[output])
    page, _ = HTMLExporter(template_name="classic").from_notebook_node(nbformat.v4.new_notebook(cells=[cell]))
    import re
    images = re.findall(r"<img\b[^>]*>", page)
    assert all(" alt=" in image for image in images), images  # nbconvert's "Alternative text is missing" has nothing to count
    assert "aria-label=" in page
