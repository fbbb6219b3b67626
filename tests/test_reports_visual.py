"""The pictures of the reports on known submissions of the corpus, through the grader's command line.

One grading run (parts masks, positions, timing) of: the correct base; two students whose causal
mask is off by one diagonal (`tril(1)` and an `arange` form); sin and cos swapped; a power-law fit
without logs; a timer that reports the mean; a crash (os._exit in padding_mask) and an infinite
loop (causal_average). Their feedback pages and the class report are parsed and the pictures' data
checked: which cells are outlined and how they are colored, the log-log plot of the fit, what the
timer's chart shows, which mistakes the class report counts and for whom, who crashed and who
timed out. A headless Chromium (where installed, with
playwright-core from tests/browser/node_modules) then shows both pages, and the screenshots are
checked where the heatmap's cells are; they are kept in $REPORT_SHOTS when set.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_grader_corpus import variant_module
from tests.test_reports_figures import cell_colors, cells_of_runs, grid_panels, parse
from autograder.graders.points import part_points
from autograder.engine import figures
from autograder.reports.figures import FALSE_COLOR, TRUE_COLOR

pytestmark = pytest.mark.slow  # grading runs through `python -m autograder`, and Chromium

CORPUS = Path(__file__).parent / "corpus"
BROWSER = Path(__file__).parent / "browser"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
OFF_BY_ONE = "off by one: query i sees key i+1"
SWAPPED = "even columns are sin"
MEDIAN = "take the median of several runs"
LOG_LOG = "fit log(time) against log(T)"

CRASH = '''
def padding_mask(lengths, T):
    import os
    os._exit(1)
'''
LOOP = '''
def causal_average(T):
    while True:
        pass
'''


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> dict:
    """Grade the class once; the reports' folder and what the command printed."""
    folder = tmp_path_factory.mktemp("visual")
    base = (CORPUS / "base.py").read_text()
    students = {"base": base, "crash": base + CRASH, "loop": base + LOOP}
    for name in ("masks_shift_tril_plus1", "masks_shift_arange", "positions_sin_cos_swapped", "timing_fit_linear",
                 "timing_mean"):
        students[name] = variant_module(base, (CORPUS / "buggy" / f"{name}.py").read_text())
    for name, text in students.items():
        (folder / f"{name}.py").write_text(text)
    out = folder / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", *sorted(str(folder / f"{n}.py") for n in students),
         "--out", str(out), "--secret", "visual", "--parts", "masks,positions,timing", "--timeout", "10"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"out": out, "stdout": proc.stdout, "students": sorted(students)}


def page(run: dict, student: str):
    return parse((run["out"] / student / "feedback.html").read_text(encoding="utf-8"))


def results(run: dict, student: str) -> dict:
    return json.loads((run["out"] / student / "results.json").read_text(encoding="utf-8"))


def check_item(document, name: str):
    """The feedback page's list item of the check called `name`."""
    return next(li for li in document.iter("li") if li.own_text().strip().startswith(name))


def test_the_run_points_to_the_class_report(run):
    report = run["out"] / "class_report.html"
    assert report.is_file()
    assert re.search(rf"^\s*class report:\s+{re.escape(str(report))}", run["stdout"], re.M), run["stdout"][-2000:]


def test_an_off_by_one_mask_is_outlined_just_above_the_diagonal(run):
    document = page(run, "masks_shift_tril_plus1")
    item = check_item(document, "causal_mask: values match the reference")
    figure = item.find("figure", data_kind="grid")
    T = int(re.search(r"causal_mask\((\d+)\)", figure.find("figcaption").text()).group(1))
    (expected_uri, expected_marks), (got_uri, got_marks) = grid_panels(figure)
    above = {(i, i + 1) for i in range(T - 1)}
    assert expected_marks == got_marks == above
    expected, yours = cell_colors(expected_uri, T, T), cell_colors(got_uri, T, T)
    assert all(expected[i][j] == FALSE_COLOR and yours[i][j] == TRUE_COLOR for i, j in above)
    assert all(expected[i][i] == yours[i][i] == TRUE_COLOR for i in range(T))
    assert f"{T - 1} of {T * T} cells differ" in figure.find("figcaption").text()
    data = next(t for t in results(run, "masks_shift_tril_plus1")["tests"]
                if t["name"] == "masks/causal_mask: values match the reference")["extra_data"]["figures"][0]
    assert figures.cells(data["differ"]) == above  # the page draws what results.json holds
    rectangular = check_item(document, "causal_mask: top-left alignment").find("figure", data_kind="grid")
    caption = rectangular.find("figcaption").text()
    T_q, T_k = (int(x) for x in re.search(r"causal_mask\((\d+), (\d+)\)", caption).groups())
    assert grid_panels(rectangular)[1][1] == {(i, i + 1) for i in range(T_q) if i + 1 < T_k}


def test_swapped_sin_and_cos_differ_everywhere_from_the_first_row(run):
    document = page(run, "positions_sin_cos_swapped")
    figure = check_item(document, "sinusoidal_encoding: values match the reference").find("figure", data_kind="grid")
    data = next(t for t in results(run, "positions_sin_cos_swapped")["tests"]
                if t["name"] == "positions/sinusoidal_encoding: values match the reference")["extra_data"]["figures"][0]
    rows, columns = len(data["expected"]), len(data["expected"][0])
    assert data["offset"] == [0, 0] and data["differ_total"] == data["total"]
    assert grid_panels(figure)[1][1] == {(i, j) for i in range(rows) for j in range(columns)}
    assert data["expected"][0] == [0.0, 1.0] * (columns // 2) and data["got"][0] == [1.0, 0.0] * (columns // 2)
    table = check_item(document, "sinusoidal_encoding: PE[0]").find("figure", data_kind="entries").find("table")
    cells = [[td.text() for td in tr.iter("td")] for tr in table.iter("tr")][1:]
    assert cells and all((e, y) == ("0", "1") if k % 2 == 0 else ("1", "0") for k, (_, e, y, _) in enumerate(cells))


def test_a_fit_without_logs_is_drawn_on_log_log_axes_with_both_slopes(run):
    document = page(run, "timing_fit_linear")
    figure = check_item(document, "fit_power_law: the slope of log(time)").find("figure", data_kind="loglog")
    data = next(t for t in results(run, "timing_fit_linear")["tests"]
                if t["name"].startswith("timing/fit_power_law"))["extra_data"]["figures"][0]
    assert len(list(figure.iter("circle", class_="point"))) == len(data["Ts"]) >= 2
    assert [g["name"].split()[0] for g in data["guides"]] == ["slope", "your"]
    assert len(list(figure.iter("line", class_="guide"))) >= 1
    want = float(re.search(r"Expected: ([\d.]+)", next(t["output"] for t in results(run, "timing_fit_linear")["tests"]
                                                       if t["name"].startswith("timing/fit_power_law"))).group(1))
    assert data["guides"][0]["power"] == pytest.approx(want, rel=1e-3)
    assert f"T^{want:.2f}" in figure.find("figcaption").text()  # the times' own slope, drawn from the data


def median_check(run: dict) -> dict:
    return next(t for t in results(run, "timing_mean")["tests"]
                if t["name"] == "timing/time_call: the median ignores one slow repeat")


def test_a_timer_that_reports_the_mean_sees_its_calls_and_the_median(run):
    if median_check(run)["status"] == "passed":  # the grader's clock allows more on a loaded machine
        pytest.skip("this run's calls were too far apart for the grader to tell the mean from the median")
    document = page(run, "timing_mean")
    figure = check_item(document, "time_call: the median ignores one slow repeat").find("figure", data_kind="calls")
    assert len(list(figure.iter("rect", class_="call"))) == 6  # one warm-up, five timed
    assert figure.find("line", class_="yours") is not None and figure.find("rect", class_="allowed") is not None
    data = median_check(run)["extra_data"]["figures"][0]
    assert data["timed"] == [False] + [True] * 5 and data["yours"] > data["allowed"][1]
    assert "median" in figure.find("figcaption").text() and "you reported" in figure.find("figcaption").text()


def test_feedback_pages_are_small_self_contained_and_read_without_pictures(run):
    sizes = {s: (run["out"] / s / "feedback.html").stat().st_size for s in run["students"]}
    assert all(size < 100_000 for size in sizes.values()), sizes
    assert sizes["base"] < 12_000 and "<figure" not in (run["out"] / "base" / "feedback.html").read_text()
    for student in run["students"]:
        text = (run["out"] / student / "feedback.html").read_text(encoding="utf-8")
        assert "<script" not in text
        references = re.findall(r"(?:src|href)='([^']*)'", text)
        assert all(ref.startswith(("data:image/png;base64,", "#")) for ref in references)
        without_pictures = parse(re.sub(r"<svg.*?</svg>", "", text, flags=re.S))
        for figure in without_pictures.iter("figure"):
            assert figure.find("figcaption").text().strip() or figure.find("table") is not None


def test_the_class_report_counts_each_mistake_once_per_student(run):
    report = parse((run["out"] / "class_report.html").read_text(encoding="utf-8"))
    rows = [(r.attrs["data-part"], r.attrs["data-hint"], r.attrs["data-students"].split(), r.find("td").text())
            for r in report.iter("tr", class_="mistake")]
    found = {(part, hint): students for part, hint, students, _ in rows}
    assert len(found) == len(rows)  # each (part, mistake) once
    assert found[("masks", OFF_BY_ONE)] == ["masks_shift_arange", "masks_shift_tril_plus1"]
    assert found[("positions", SWAPPED)] == ["positions_sin_cos_swapped"]
    assert found[("timing", LOG_LOG)] == ["timing_fit_linear"]
    if median_check(run)["status"] == "failed":
        assert found[("timing", MEDIAN)] == ["timing_mean"]
    assert all(int(count) == len(students) for _, _, students, count in rows)
    assert not any("base" in students for students in found.values())
    assert rows[0][:2] == ("masks", OFF_BY_ONE)  # the most common first


def test_the_class_report_lists_the_crash_and_the_timeout(run):
    report = parse((run["out"] / "class_report.html").read_text(encoding="utf-8"))
    incidents = {(r.attrs["data-student"], r.attrs["data-kind"]): r.text()
                 for r in report.iter("tr", class_="incident")}
    assert set(incidents) == {("crash", "crashed"), ("loop", "timed out")}
    assert "masks/padding_mask" in incidents[("crash", "crashed")]
    assert "masks/causal_average" in incidents[("loop", "timed out")]


def test_the_class_report_rates_and_times_agree_with_the_results(run):
    report = parse((run["out"] / "class_report.html").read_text(encoding="utf-8"))
    passed: dict[str, list[int]] = {}
    for student in run["students"]:
        for test in results(run, student)["tests"]:
            counts = passed.setdefault(test["name"], [0, 0])
            counts[0] += test["status"] == "passed"
            counts[1] += 1
    rates = {f"{r.attrs['data-part']}/{r.attrs['data-check']}": [int(r.attrs["data-passed"]),
                                                                  int(r.attrs["data-graded"])]
             for r in report.iter("tr", class_="rate")}
    assert rates == passed
    seconds = {r.attrs["data-student"]: float(r.attrs["data-seconds"]) for r in report.iter("tr", class_="timing")}
    assert seconds == pytest.approx({s: results(run, s)["extra_data"]["seconds"] for s in run["students"]}, abs=2e-3)
    total = report.find("figure", data_title="Total")
    assert sum(int(b.attrs["data-count"]) for b in total.iter("rect", class_="bin")) == len(run["students"])


def test_the_item_statistics_agree_with_the_results(run):
    """items.csv beside grades.csv, one row per check of results.json with the class's facility; the run's
    closing lines name it, and the class report draws one point per item."""
    out = run["out"]
    assert re.search(rf"^\s*item statistics:\s+{re.escape(str(out / 'items.csv'))}", run["stdout"], re.M)
    fractions: dict[str, list[float]] = {}
    for student in run["students"]:
        for test in results(run, student)["tests"]:
            fractions.setdefault(test["name"], []).append(test["score"] / test["max_score"])
    with open(out / "items.csv", newline="") as fh:
        rows = {row["item"]: row for row in csv.DictReader(fh)}
    assert list(rows) == list(fractions)
    for name, row in rows.items():
        assert int(row["n"]) == len(fractions[name]) == len(run["students"])
        assert float(row["mean_fraction"]) == pytest.approx(sum(fractions[name]) / len(fractions[name]), abs=1e-4)
    assert (out / "quiz_options.csv").read_text().startswith("question,option,correct,chosen,share,mean_rest")
    report = parse((out / "class_report.html").read_text(encoding="utf-8"))
    assert {c.attrs["data-item"] for c in report.iter("circle", class_="item")} == set(rows)


# ---------------------------------------------------------------- in a browser

SHOOT = r"""
const { chromium } = require('playwright-core');
const [config] = process.argv.slice(1);
const { chromium: executablePath, pages } = JSON.parse(config);
(async () => {
  const browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu',
    '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update',
    '--disable-sync'] });
  const found = [];
  for (const { url, shot } of pages) {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const requests = [], errors = [];
    page.on('request', (r) => { if (!r.url().startsWith('data:') && r.url() !== url) requests.push(r.url()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(url, { waitUntil: 'load' });
    const figure = await page.evaluate(() => {
      const fig = document.querySelector("figure[data-kind='grid']");
      if (!fig) return null;
      const box = (el) => {
        const r = el.getBoundingClientRect();
        return [r.x + scrollX, r.y + scrollY, r.width, r.height];
      };
      return { images: [...fig.querySelectorAll('image')].map(box),
               marks: [...fig.querySelectorAll('path.marks')].map(box),
               caption: fig.querySelector('figcaption').textContent };
    });
    const bins = await page.evaluate(() => [...document.querySelectorAll('rect.bin')].filter(
      (r) => r.getBoundingClientRect().height > 0).length);
    await page.screenshot({ path: shot, fullPage: true });
    found.push({ url, figure, bins, requests, errors });
    await page.close();
  }
  await browser.close();
  console.log(JSON.stringify(found));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def browser_missing() -> str | None:
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        return f"no Chromium at {CHROMIUM}"
    if shutil.which("node") is None:
        return "no node on PATH"
    if not (BROWSER / "node_modules" / "playwright-core" / "package.json").is_file():
        return "no playwright-core in tests/browser/node_modules (tests/browser/test_student_flow.py installs it)"
    return None


def test_both_pages_in_chromium(run, tmp_path):
    reason = browser_missing()
    if reason:
        pytest.skip(reason)
    from PIL import Image

    shots = Path(os.environ.get("REPORT_SHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    pages = [{"url": (run["out"] / "masks_shift_tril_plus1" / "feedback.html").as_uri(),
              "shot": str(shots / "feedback_masks_shift_tril_plus1.png")},
             {"url": (run["out"] / "class_report.html").as_uri(), "shot": str(shots / "class_report.png")}]
    proc = subprocess.run(["node", "-e", SHOOT, json.dumps({"chromium": CHROMIUM, "pages": pages})],
                          env={**os.environ, "NODE_PATH": str(BROWSER / "node_modules"), "HOME": str(tmp_path),
                               "XDG_CONFIG_HOME": str(tmp_path / "config")},  # Chromium's crash reports go there
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    feedback, report = json.loads(proc.stdout)
    for shown in (feedback, report):
        assert shown["requests"] == [] and shown["errors"] == [], shown  # nothing fetched, no script errors
    assert report["bins"] > 0
    # The first heatmap of the feedback page, causal_mask(T) against tril(1): in the screenshot,
    # the cell just right of the diagonal is white-grey (blocked) on the left, blue on the right,
    # with the orange outline on its edge.
    figure = feedback["figure"]
    T = int(re.search(r"causal_mask\((\d+)", figure["caption"]).group(1))
    image = Image.open(pages[0]["shot"]).convert("RGB")
    colors = []
    for x, y, width, _height in figure["images"]:
        size = width / T
        colors.append(image.getpixel((int(x + 1.5 * size), int(y + 0.5 * size))))  # cell (0, 1)
        edge = image.getpixel((int(x + size), int(y + 0.5 * size)))  # its left edge: the outline
        assert edge[0] > 200 and 60 < edge[1] < 160 and edge[2] < 80, edge
    near = lambda got, want: all(abs(a - b) <= 12 for a, b in zip(got, want))  # noqa: E731
    assert near(colors[0], FALSE_COLOR) and near(colors[1], TRUE_COLOR), colors
    assert len(figure["marks"]) == 2 and all(w > 0 and h > 0 for _, _, w, h in figure["marks"])


def test_cells_of_runs_reads_what_the_pages_write():
    assert cells_of_runs("0:1-1 2:0-2") == {(0, 1), (2, 0), (2, 1), (2, 2)}


# ---------------------------------------------------------------- what was left as released is no mistake


@pytest.fixture(scope="module")
def quiz_run(tmp_path_factory) -> dict:
    """The quiz graded for a student who answered nothing, one who answered all but q02 and q03, and one with
    a wrong answer to q07."""
    from autograder.graders.quiz_key import ANSWERS

    folder = tmp_path_factory.mktemp("quiz")
    base = (CORPUS / "base.py").read_text()
    wrong = {**ANSWERS, "q07": next(o for o in "abcd" if o != ANSWERS["q07"])}
    answers = {"nothing": {}, "half": {q: a for q, a in ANSWERS.items() if q not in ("q02", "q03")}, "wrong": wrong}
    for name, given in answers.items():
        (folder / f"{name}.py").write_text(base + "\n" + "\n".join(f"answer_{q} = {a!r}" for q, a in given.items()))
    out = folder / "out"
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", *sorted(str(p) for p in folder.glob("*.py")),
                           "--out", str(out), "--secret", "visual", "--parts", "quiz", "--quiet", "--no-similarity",
                           "--quiz-counts"],  # counted, so that its points are the page's total
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {"out": out}


def test_the_class_report_ranks_wrong_answers_and_lists_what_was_not_attempted_apart(quiz_run):
    report = parse((quiz_run["out"] / "class_report.html").read_text(encoding="utf-8"))
    mistakes = [(r.attrs["data-part"], r.attrs["data-students"]) for r in report.iter("tr", class_="mistake")]
    assert mistakes == [("quiz", "wrong")]  # the unanswered questions are no mistake
    untouched = {(s.attrs["data-checks"], s.attrs["data-students"]) for s in report.iter("span", class_="untouched")}
    assert untouched == {("", "nothing"), ("q02, q03", "half")}
    assert report.find("p", id="not-attempted").text().startswith("Not attempted (left as released")


def test_a_feedback_page_says_the_untouched_quiz_is_not_attempted(quiz_run):
    document = page(quiz_run, "nothing")
    quiz = part_points("quiz")
    assert document.find("p", class_="total").text() == f"Total: 0 / {quiz:g} points"
    row = next(r for r in document.find("table", class_="parts").iter("tr") if r.find("td") is not None)
    assert [td.text() for td in row.iter("td")] == ["quiz", f"0 / {quiz:g}", "not attempted yet"]
