"""HTML pieces shared by the paper pages and the index: styles, verdict cells, tables, the preset badge.

Everything is inline (no external CSS, fonts or scripts): the report must open offline (architecture §1, §10).
"""

from __future__ import annotations

import html
import math
import re

import pandas as pd

from ..outputs import PAPER_PRESET  # any other preset is flagged on every page and item
from ..verdicts.comparison import ALTERNATIVE, DEFAULT, SMOKE_MEANINGS, describe_tolerance, marked_weak

# The one palette of the report: verdict cells, item tiles, legends and the verdict figure of the index all use
# it. Light enough for black text on top; ``not-reproducible`` marks an item the project cannot reproduce.
NOT_REPRODUCIBLE = "not-reproducible"
VERDICT_COLOURS = {
    "match": "#b9e2c3", "mismatch": "#f3b6bc", "inconclusive": "#f6f0d4", "failed": "#f2c48e", "fitted": "#f1e7a8",
    "not-run": "#d9dbde", "no-reference": "#e4eef8", NOT_REPRODUCIBLE: "#ddd0ee",
    "computed": "#cfe3f3", "not-produced": "#ececec",
}
# Darker edges of the same hues, for bars and tiles.
VERDICT_EDGES = {
    "match": "#3f8f52", "mismatch": "#b8414d", "inconclusive": "#a89a5c", "failed": "#b0661b", "fitted": "#9c8a2b",
    "not-run": "#7d8288", "no-reference": "#7c98b6", NOT_REPRODUCIBLE: "#7d62a3",
    "computed": "#4a7fa8", "not-produced": "#a0a0a0",
}

# An item's caption says what is drawn and with which settings: at most this many lines in the browser check's
# window (tests/tools/browser_check.py); how it was computed goes to the renderer's ``method``, folded under it.
CAPTION_LINES = 4

# For pages this package writes whole (the index, the scoreboard); the notebook pages keep nbconvert's layout.
PAGE_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 75em; padding: 0 1em; line-height: 1.4; }
h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.made-with { color: #444; }
figure.verdict-figure { margin: 0.5em 0; }
figure.verdict-figure svg { max-width: 100%; width: 48em; height: auto; }
figure.verdict-figure figcaption, .note { color: #444; font-size: 0.9em; }
.legend { margin: 0.3em 0 0.8em; font-size: 0.9em; }
.legend span.swatch { margin-right: 1em; }
.item-group { margin: 0.6em 0 1em; }
.item-group h3 { font-size: 1em; margin: 0 0 0.3em; }
.item-group h3 .counts { font-weight: normal; color: #444; margin-left: 0.5em; }
.tiles { display: flex; flex-wrap: wrap; gap: 0.25em; }
.tile, .swatch { display: inline-block; border: 1px solid; border-radius: 0.25em; padding: 0.1em 0.4em;
  font-family: monospace; font-size: 0.85em; color: #000; text-decoration: none; }
a.tile:hover, a.tile:focus { outline: 2px solid #000; }
span.tile { border-style: dashed; }
.swatch { font-family: inherit; }
form.filters { margin: 0.5em 0; display: flex; flex-wrap: wrap; gap: 1em; align-items: center; }
form.filters[hidden] { display: none; }  /* shown by the page's script, which makes it work */
#row-count { font-weight: bold; }
table.sortable th button { font: inherit; font-weight: bold; border: none; background: none; padding: 0;
  cursor: pointer; white-space: nowrap; }
table.sortable td a { white-space: nowrap; }
table.sortable th button::after { content: " \\2195"; color: #888; }
table.sortable th[aria-sort=ascending] button::after { content: " \\25B2"; color: inherit; }
table.sortable th[aria-sort=descending] button::after { content: " \\25BC"; color: inherit; }
table.sortable td.number { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable { font-size: 0.8em; line-height: 1.2; }
table.sortable td { white-space: nowrap; padding: 0.1em 0.4em; }
table.sortable td.note details[open] { white-space: normal; min-width: 24em; }
/* an origin cell shows its kind and bundle, its whole text on hover (scoreboard_page.origin_label) */
table.sortable td.origin { max-width: 16em; overflow: hidden; text-overflow: ellipsis; }
"""

# For items, tables and badges, wherever they are shown.
ITEM_STYLE = """
table.data { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
/* A table wider than the column scrolls inside its own box: no page scrolls sideways (browser_check.WINDOW). */
table.data { display: block; max-width: 100%; overflow-x: auto; }
table.data th, table.data td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
table.data th { background: #f4f4f4; }
table.data td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.reference td:nth-child(2) { min-width: 16em; }
table.reference td:last-child { white-space: nowrap; }
details.notes summary, details.method summary { cursor: pointer; color: #444; font-size: 0.9em; }
details.method p { margin: 0.3em 0; font-size: 0.9em; }
details.notes table.data td { min-width: 6em; }
figure.item { margin: 1.5em 0; padding: 0.5em; border-top: 1px solid #ddd; }
figure.item img { width: 100%; max-width: 56em; height: auto; }
figcaption .item-id { font-family: monospace; font-weight: bold; margin-right: 0.5em; }
.deviations { color: #8a4b00; }
.computed-by { color: #555; font-family: monospace; font-size: 0.85em; }
p.origin { color: #555; font-size: 0.85em; margin: 0.2em 0; overflow-wrap: anywhere; }
.preset-badge { background: #ffcc00; color: #000; border-radius: 0.3em; padding: 0 0.4em; font-size: 0.85em; }
.preset-banner { background: #fff3cd; border: 1px solid #ffcc00; padding: 0.5em 1em; }
section.not-reproducible { border-left: 4px solid #999; padding-left: 1em; color: #444; }
""" + "".join(
    f"td.verdict-{name} {{ background: {colour}; }}\n"
    f".tile.verdict-{name}, .swatch.verdict-{name} {{ background: {colour}; border-color: {VERDICT_EDGES[name]}; }}\n"
    for name, colour in VERDICT_COLOURS.items()
)


def smoke_states() -> str:
    """The smoke states and their meanings, as one HTML phrase: "<em>computed</em> (a finite value), …"."""
    return ", ".join(f"<em>{state}</em> ({escape(meaning)})" for state, meaning in SMOKE_MEANINGS.items())


def style_block(whole_page: bool = False) -> str:
    return f"<style>{(PAGE_STYLE if whole_page else '') + ITEM_STYLE}</style>"


def escape(text: object) -> str:
    return html.escape(str(text), quote=True)


def with_code(text: str) -> str:
    """``text`` escaped, its `backquoted` parts (a setting, a command) set as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))


def format_number(value: object) -> str:
    """Four significant digits; an en dash for a missing value."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (int, float)):
        return f"{value:.4g}"
    return str(value)


def preset_badge(preset: str) -> str:
    """A badge marking output made with a non-paper preset; empty for the paper preset."""
    if preset == PAPER_PRESET:
        return ""
    return f'<span class="preset-badge">{escape(preset)} preset</span>'


def verdict_cell(verdict: str) -> str:
    return f'<td class="verdict-{escape(verdict)}">{escape(verdict)}</td>'


def frame_table(frame: pd.DataFrame, float_format: str = ".4g", index: bool = False) -> str:
    """A DataFrame as an HTML table; a ``verdict`` column is colour-coded."""
    body = frame.reset_index() if index else frame
    head = "".join(f"<th>{escape(c)}</th>" for c in body.columns)
    rows = []
    for values in body.itertuples(index=False):
        cells = []
        for column, value in zip(body.columns, values):
            if column == "verdict":
                cells.append(verdict_cell(value))
            elif isinstance(value, float) and not math.isnan(value):
                cells.append(f"<td>{format(value, float_format)}</td>")
            else:
                cells.append(f"<td>{escape(format_number(value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="data"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def with_spread(value: object, spread: object) -> str:
    """A reproduced value with its seed spread, ``0.52 ± 0.03``; the value alone where it has none."""
    if spread is None or pd.isna(spread) or not float(spread):
        return format_number(value)
    return f"{format_number(value)} ± {float(spread):.2g}"


def _rule(row: object) -> str:
    if pd.isna(row.compare):
        return "–"
    return describe_tolerance(row.reported, row.compare, row.tolerance, row.spread)


def beside_defaults(scored: pd.DataFrame) -> pd.DataFrame:
    """The rows of one item with each alternative reading right after its default: the default whose quantity
    begins the alternative's (``slope`` before ``slope_offset``), else the default with the same reported value;
    an alternative with neither stays where it is."""
    defaults = scored[scored["reading"].fillna(DEFAULT) == DEFAULT]
    anchor: dict[int, object] = {}
    for index, row in scored[scored["reading"] == ALTERNATIVE].iterrows():
        prefixed = [i for i, q in defaults["quantity"].items() if str(row["quantity"]).startswith(f"{q}_")]
        same = [i for i, r in defaults["reported"].items() if r == row["reported"]]
        candidates = sorted(prefixed, key=lambda i: -len(defaults.at[i, "quantity"])) or same
        if candidates:
            anchor[index] = candidates[0]
    order = []
    for index in scored.index:
        if index in anchor:
            continue
        order.append(index)
        order += [i for i, a in anchor.items() if a == index]
    return scored.loc[order]


def _verdict_text(row: object) -> str:
    """The verdict, with the marks that qualify it: weak, and a reading or check that is counted apart."""
    marks = ["weak"] if marked_weak(row.weak) else []
    if getattr(row, "within", "") == "seed-noise":
        marks.append("within seed noise")
    if getattr(row, "check", None) == "consistency":
        marks.append("check")
    elif isinstance(row.reading, str) and row.reading not in ("", DEFAULT, row.verdict):
        marks.append(row.reading)
    return str(row.verdict) + (f" ({', '.join(marks)})" if marks else "")


def origin_summary(origins: pd.Series) -> str:
    """Where an item's reproduced numbers come from, in one line: each distinct origin text of its rows (the
    scoreboard's ``origin``), with its count of rows when they differ: "computed (cpu:x86_64, 2026-12-01, b5ab422)",
    "computed (…) (3 rows) · not run (2 rows)"."""
    texts = [t if isinstance(t, str) and t else "origin unknown" for t in origins]
    counts = {t: texts.count(t) for t in dict.fromkeys(texts)}
    if len(counts) == 1:
        return next(iter(counts))
    return " · ".join(f"{t} ({n} row{'s' if n > 1 else ''})" for t, n in counts.items())


def reference_table(scored: pd.DataFrame) -> str:
    """The "reported vs reproduced" table of one item, from rows of ``scoreboard.score``: a line saying where this
    run's numbers come from (:func:`origin_summary`: computed here or imported from a bundle, with device, date and
    commit), one compact row per quantity (what it is, the paper's value with its rule, this run's value with its
    seed spread, the verdict with its marks), then its notes folded under it: where each reported value comes from,
    the tolerance's basis, the reading, the row's origin and the note (docs/decisions/README.md, "Verdicts"). Notes
    never go into the caption."""
    if scored.empty:
        return ""
    scored = beside_defaults(scored)
    origins = scored["origin"] if "origin" in scored else pd.Series("", index=scored.index)
    rows = []
    for row in scored.itertuples():
        description = row.description if isinstance(row.description, str) else ""
        rows.append(
            f"<tr><td><code>{escape(row.quantity)}</code></td><td>{escape(description)}</td>"
            f'<td class="number">{escape(_rule(row))}</td>'
            f'<td class="number">{escape(with_spread(row.reproduced, row.spread))}</td>'
            f'<td class="verdict-{escape(row.verdict)}">{escape(_verdict_text(row))}</td></tr>'
        )
    table = ('<table class="data reference"><thead><tr><th>quantity</th><th>what it is</th><th>paper</th>'
             f'<th>this run</th><th>verdict</th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
    notes = pd.DataFrame({
        "quantity": scored["quantity"],
        "provenance": scored["provenance"].fillna(""),
        "basis": scored["basis"].fillna(""),
        "reading": scored["reading"].fillna(""),
        "source": scored["source"].fillna(""),
        "origin": origins.fillna(""),
        "note": scored["note"].fillna(""),
    })
    folded = (f'<details class="notes"><summary>Notes and sources ({len(notes)})</summary>'
              f"{frame_table(notes)}</details>")
    origin = f'<p class="origin">Where these numbers come from: {escape(origin_summary(origins))}</p>'
    return ('<div class="reference"><p class="reference-title">Reported vs reproduced</p>' + origin + table + folded
            + "</div>")
