"""The class report's section on items (items.py): a picture of facility against discrimination, one point per
item coloured by its part, and the short list of items to look at, each with why. Every number the picture
shows is also in a table beside it, and in items.csv and quiz_options.csv.

A class too small to compare students (under items.MIN_CLASS graded submissions: a Gradescope upload is
graded alone, as a class of one) gets a sentence that says so instead of statistics that would mean nothing.
"""

from __future__ import annotations

import html
from typing import Mapping

from ..model.results import GradedSubmission
from .items import EVERYONE, ITEMS_FILE, MIN_CLASS, NEAR_ZERO, OPTIONS_FILE, Flag, Item, ItemAnalysis, item_analysis

esc = html.escape
SHOWN_FLAGS = 15  # rows of the list of items to look at before the rest fold away
WIDTH, HEIGHT = 560, 330
LEFT, RIGHT, TOP, BOTTOM = 56, WIDTH - 16, 14, 240  # the plot area; below it, a strip for items without a value
STRIP = 272  # where an item without a discrimination is drawn
LOOK_AT_FILL = "#fbeaea"  # the band below NEAR_ZERO
CLOSE = 8  # pixels: points this close share one count beside them


def items_section(graded: list[GradedSubmission], colors: Mapping[str, str]) -> str:
    """The section, `colors` giving each part's colour (the class report's, for the same parts)."""
    analysis = item_analysis(graded)
    out = ["<h2 id='items'>What the answers say about the checks</h2>"]
    files = (f"<a href='{ITEMS_FILE}'>{ITEMS_FILE}</a> and <a href='{OPTIONS_FILE}'>{OPTIONS_FILE}</a>")
    if analysis.submissions < MIN_CLASS:
        count = f"{analysis.submissions} graded submission{'s' if analysis.submissions != 1 else ''}"
        return "\n".join(out + [f"<p id='items-too-few'>{count}: item statistics compare students with one another, "
                                f"so they need a class of at least {MIN_CLASS} graded together (a Gradescope upload "
                                f"is graded alone, as a class of one). Each check's score is in {files}.</p>"])
    out.append("<p class='muted'>Each check and quiz question is an item. Its <b>facility</b> is the mean fraction "
               "of its points the class got (1: everyone passes, 0: nobody). Its <b>discrimination</b> is the "
               "correlation between its score and the rest of the same submission's score: high when the students "
               "who pass it do well elsewhere, near zero when passing it says nothing about the rest, negative when "
               f"the weaker students pass it and the stronger fail it. All of it per item: {files}.</p>")
    out.append(_picture(analysis, colors))
    out.append(_flag_list(analysis.flags))
    out.append(_options_table(analysis))
    return "\n".join(out)


# ---------------------------------------------------------------- the picture


def _x(facility: float) -> float:
    return LEFT + facility * (RIGHT - LEFT)


def _y(discrimination: float) -> float:
    return TOP + (1 - discrimination) / 2 * (BOTTOM - TOP)


def _picture(analysis: ItemAnalysis, colors: Mapping[str, str]) -> str:
    flagged = {f.item.name for f in analysis.flags if any(r.kind != EVERYONE for r in f.reasons)}
    body = [f"<rect x='{LEFT}' y='{_y(NEAR_ZERO):.1f}' width='{RIGHT - LEFT}' height='{BOTTOM - _y(NEAR_ZERO):.1f}' "
            f"fill='{LOOK_AT_FILL}'/>"]
    for d in (-1, -0.5, 0, 0.5, 1):
        y = _y(d)
        body.append(f"<line x1='{LEFT}' x2='{RIGHT}' y1='{y:.1f}' y2='{y:.1f}' stroke='{'#888' if d == 0 else '#ddd'}'/>"
                    f"<text x='{LEFT - 5}' y='{y + 3:.1f}' text-anchor='end' font-size='10'>{d:g}</text>")
    for f in (0, 0.25, 0.5, 0.75, 1):
        x = _x(f)
        body.append(f"<line x1='{x:.1f}' x2='{x:.1f}' y1='{TOP}' y2='{BOTTOM}' stroke='#eee'/>"
                    f"<text x='{x:.1f}' y='{STRIP + 22}' text-anchor='middle' font-size='10'>{f:g}</text>")
    body.append(f"<text x='{RIGHT - 4}' y='{BOTTOM - 6}' text-anchor='end' font-size='10' fill='#5a2020'>below "
                f"{NEAR_ZERO:g}: passing says little, or the wrong thing</text>")
    body.append(f"<line x1='{LEFT}' x2='{RIGHT}' y1='{STRIP}' y2='{STRIP}' stroke='#ddd' stroke-dasharray='3 3'/>"
                f"<text x='{LEFT - 5}' y='{STRIP + 3}' text-anchor='end' font-size='10'>none</text>"
                f"<text x='{(LEFT + RIGHT) / 2:.0f}' y='{HEIGHT - 6}' text-anchor='middle' font-size='11'>facility "
                "(0: nobody passes, 1: everyone passes)</text>"
                f"<text transform='translate(13 {(TOP + BOTTOM) / 2:.0f}) rotate(-90)' text-anchor='middle' "
                "font-size='11'>discrimination</text>")
    groups: list[list[tuple[float, float]]] = []  # points within CLOSE of a group's first, counted together
    for item in sorted(analysis.items, key=lambda i: i.name in flagged):  # the outlined ones on top
        x = _x(item.mean_fraction)
        y = _y(item.discrimination) if item.discrimination is not None else STRIP
        group = next((g for g in groups if abs(g[0][0] - x) <= CLOSE and abs(g[0][1] - y) <= CLOSE), None)
        if group is None:
            groups.append([(x, y)])
        else:
            group.append((x, y))
        ring = " stroke='#222' stroke-width='1.6'" if item.name in flagged else " stroke='#fff' stroke-width='0.8'"
        body.append(f"<circle class='item' data-item='{esc(item.name)}' data-facility='{item.mean_fraction:.4f}' "
                    f"data-discrimination='{_number(item.discrimination)}' cx='{x:.1f}' cy='{y:.1f}' r='4.5' "
                    f"fill='{colors.get(item.part, '#777')}'{ring}><title>{esc(_describe(item))}</title></circle>")
    for here in groups:
        if len(here) > 1:
            x, y = max(here)
            body.append(f"<text x='{x + 7:.1f}' y='{y - 5:.1f}' font-size='9' fill='#333'>{len(here)}</text>")
    summary = (f"Facility against discrimination of {len(analysis.items)} items over {analysis.submissions} "
               f"submissions; {len(flagged)} of them outlined, to look at (listed below).")
    svg = (f"<svg xmlns='http://www.w3.org/2000/svg' width='{WIDTH}' height='{HEIGHT}' viewBox='0 0 {WIDTH} {HEIGHT}' "
           f"role='img' font-family='sans-serif'><title>{esc(summary)}</title>{''.join(body)}</svg>")
    key = "<p class='key'>" + "".join(f"<span style='background:{c}'></span>{esc(p)}" for p, c in colors.items()
                                      if any(i.part == p for i in analysis.items)) + "</p>"
    caption = ("One point per item, coloured by its part; a number beside a point counts the items drawn on or "
               "next to it. "
               "Outlined: an item in the list below. Items without a discrimination (everyone or nobody passes, "
               "or fewer than three submissions hold them) sit on the line marked none.")
    rows = "".join(f"<tr><td>{esc(i.name)}</td><td>{esc(i.part)}</td><td class='n'>{i.max_points:g}</td>"
                   f"<td class='n'>{i.n}</td><td class='n'>{i.mean_fraction:.2f}</td>"
                   f"<td class='n'>{_number(i.discrimination, '—')}</td></tr>" for i in analysis.items)
    table = ("<details><summary>The numbers</summary><table id='item-stats'><tr><th>item</th><th>part</th>"
             f"<th>points</th><th>n</th><th>facility</th><th>discrimination</th></tr>{rows}</table></details>")
    return (f"<figure id='items-picture'>{svg}<figcaption style='max-width:40em'>{esc(summary)} {esc(caption)}"
            f"</figcaption>{key}{table}</figure>")


def _describe(item: Item) -> str:
    return (f"{item.name}: facility {item.mean_fraction:.2f}, discrimination "
            f"{_number(item.discrimination, 'none')}, over {item.n} submissions")


def _number(value: float | None, missing: str = "") -> str:
    return missing if value is None else f"{value:.2f}"


# ---------------------------------------------------------------- what to look at


def _flag_row(flag: Flag) -> str:
    why = "".join(f"<li data-kind='{esc(r.kind)}'><b>{esc(r.kind)}</b>: {esc(r.text)}</li>" for r in flag.reasons)
    return (f"<tr class='flag' data-item='{esc(flag.item.name)}' data-kinds='{esc(';'.join(r.kind for r in flag.reasons))}'>"
            f"<td>{esc(flag.item.name)}</td><td>{esc(flag.item.part)}</td><td><ul>{why}</ul></td></tr>")


def _flag_list(flags: tuple[Flag, ...]) -> str:
    """The items to look at, the most pressing first; those whose only reason is that everyone passes, folded."""
    out = ["<h3 id='items-to-look-at'>Items to look at</h3>"]
    listed = [f for f in flags if any(r.kind != EVERYONE for r in f.reasons)]
    easy = [f for f in flags if all(r.kind == EVERYONE for r in f.reasons)]
    head = "<tr><th>item</th><th>part</th><th>why</th></tr>"
    if listed:
        out.append(f"<table id='flagged-items'>{head}{''.join(map(_flag_row, listed[:SHOWN_FLAGS]))}</table>")
        if len(listed) > SHOWN_FLAGS:
            out.append(f"<details><summary>{len(listed) - SHOWN_FLAGS} more</summary><table>{head}"
                       f"{''.join(map(_flag_row, listed[SHOWN_FLAGS:]))}</table></details>")
    else:
        out.append("<p>None: every item that tells students apart does so in the direction of the rest of their "
                   "work, and every quiz option drew someone.</p>")
    if easy:
        out.append(f"<details id='everyone-passes'><summary>{len(easy)} item(s) every submission passed (they tell "
                   f"no one apart; fine for a warm-up)</summary><table>{head}{''.join(map(_flag_row, easy))}"
                   "</table></details>")
    return "\n".join(out)


def _options_table(analysis: ItemAnalysis) -> str:
    if not analysis.options:
        return ""
    rows = "".join(f"<tr class='option' data-question='{esc(o.question)}' data-option='{o.option}'>"
                   f"<td>{esc(o.question)}</td><td>{o.option}</td><td>{'right' if o.correct else ''}</td>"
                   f"<td class='n'>{o.chosen}</td><td class='n'>{_percent(o.share)}</td>"
                   f"<td class='n'>{_number(o.mean_rest, '—')}</td></tr>" for o in analysis.options)
    return ("<details><summary>The quiz's options: how many chose each, and how they did on the rest (letters as the "
            "key and the source notebook give them)</summary><table id='quiz-options'><tr><th>question</th>"
            "<th>option</th><th>right</th><th>chosen</th><th>share</th><th>mean on the rest</th></tr>"
            f"{rows}</table></details>")


def _percent(share: float | None) -> str:
    return "—" if share is None else f"{100 * share:.0f}%"
