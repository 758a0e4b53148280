"""``report/scoreboard.html``: the whole scoreboard, one row per reference value, sortable and filterable.

The full table is in the HTML, so the page reads without JavaScript; a small inline script (no library, no
external asset) adds sorting by column header, filters by verdict, paper, reading (default, alternative, fitted),
weak mark, origin (computed here, imported from a bundle, stale, failed, not run) and text, and a live row count
(docs/decisions/README.md, "Verdicts"). An origin cell shows its kind and bundle; its whole text (device, date,
commit; a failed job's log) is the cell's tooltip and the CSV's.
The browser check (``browser_check``) drives the filters through these element ids.
"""

from __future__ import annotations

import math
from typing import Mapping

import pandas as pd

from ..verdicts.comparison import COMPARE_RULES, VERDICTS, WEAK_MEANING, marked_weak
from .markup import escape, format_number, smoke_states, style_block, verdict_cell
from ..verdicts.references import READINGS
from ..verdicts.scoreboard import (ORIGIN_FAILED, ORIGIN_IMPORTED, ORIGIN_KINDS, ORIGIN_STALE, is_smoke,
                                   origin_bundles, origin_kind)

# The scoreboard's columns but the preset (the page says it once) and basis_detail (the basis's words, shown as
# its cell's tooltip).
# The verdict comes right after the row's name, so that it shows on a narrow screen before the table scrolls; the
# paper, which the item id names too, comes last.
COLUMNS = ("item", "quantity", "verdict", "reported", "reproduced", "spread", "compare", "tolerance", "weak",
           "within", "reading", "check", "basis", "provenance", "origin", "note", "paper")
RULES = "; ".join(f"{name}: {rule}" for name, rule in COMPARE_RULES.items())
NUMERIC = ("reported", "reproduced", "spread", "tolerance")
# Element ids the script and the browser check rely on.
TABLE_ID, VERDICT_FILTER, PAPER_FILTER, READING_FILTER, WEAK_FILTER, ORIGIN_FILTER, TEXT_FILTER, ROW_COUNT = (
    "scoreboard-table", "filter-verdict", "filter-paper", "filter-reading", "filter-weak", "filter-origin",
    "filter-text", "row-count")

SCRIPT = """
(function () {
  var table = document.getElementById('%(table)s'), body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var form = document.getElementById('filters'), count = document.getElementById('%(count)s');
  var verdict = document.getElementById('%(verdict)s'), paper = document.getElementById('%(paper)s');
  var text = document.getElementById('%(text)s'), reading = document.getElementById('%(reading)s');
  var weak = document.getElementById('%(weak)s'), origin = document.getElementById('%(origin)s');
  function apply() {
    var v = verdict.value, p = paper.value, t = text.value.trim().toLowerCase(), shown = 0;
    var r = reading.value, w = weak.value, o = origin.value;
    rows.forEach(function (row) {
      var keep = (!v || row.dataset.verdict === v) && (!p || row.dataset.paper === p)
        && (!r || row.dataset.reading === r) && (!w || row.dataset.weak === w)
        && (!o || row.dataset.origin === o) && (!t || row.dataset.text.indexOf(t) !== -1);
      row.hidden = !keep;
      if (keep) { shown += 1; }
    });
    count.textContent = shown + ' of ' + rows.length + ' rows shown';
  }
  function key(row, column, numeric) {
    var cell = row.cells[column];
    if (!numeric) { return cell.textContent; }
    return cell.dataset.value === '' ? NaN : parseFloat(cell.dataset.value);
  }
  function sortBy(th, column) {
    var numeric = th.dataset.type === 'number';
    var direction = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute('aria-sort'); });
    rows.sort(function (a, b) {
      var x = key(a, column, numeric), y = key(b, column, numeric);
      if (numeric) {
        if (isNaN(x) || isNaN(y)) { return isNaN(x) - isNaN(y); }  // missing values last, either way
        return direction * (x - y);
      }
      return direction * x.localeCompare(y, undefined, {numeric: true});
    });
    var fragment = document.createDocumentFragment();
    rows.forEach(function (row) { fragment.appendChild(row); });
    body.appendChild(fragment);
    th.setAttribute('aria-sort', direction === 1 ? 'ascending' : 'descending');
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
    var button = document.createElement('button');
    button.type = 'button';
    button.textContent = th.textContent;
    button.title = 'sort by ' + th.textContent;
    button.addEventListener('click', function () { sortBy(th, column); });
    th.textContent = '';
    th.appendChild(button);
  });
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  form.addEventListener('submit', function (event) { event.preventDefault(); });
  form.hidden = false;
  apply();
})();
""" % {"table": TABLE_ID, "count": ROW_COUNT, "verdict": VERDICT_FILTER, "paper": PAPER_FILTER, "text": TEXT_FILTER,
       "reading": READING_FILTER, "weak": WEAK_FILTER, "origin": ORIGIN_FILTER}


def origin_label(text: object) -> str:
    """An origin in a few words, for a table cell: its kind, with the bundle of an imported or stale one
    (``imported: real-data-cpu-2026-12-02``), ``failed (log)`` where a failed job's log is named; the whole text is
    the tooltip."""
    kind = origin_kind(text)
    if kind in (ORIGIN_IMPORTED, ORIGIN_STALE) and origin_bundles(text):
        return f"{kind}: {', '.join(origin_bundles(text))}"
    if kind == ORIGIN_FAILED and isinstance(text, str) and "log:" in text:
        return f"{kind} (log)"
    return kind


def _cell(column: str, value: object, item_links: Mapping[str, str], detail: object = "") -> str:
    if column == "verdict":
        return verdict_cell(value)
    if column == "origin":
        text = value if isinstance(value, str) else ""
        return f'<td class="origin" title="{escape(text)}">{escape(origin_label(text))}</td>'
    if column == "note":  # folded: a row stays one line high, so a screen holds many (the note opens on a click)
        text = "" if not isinstance(value, str) else value
        return f'<td class="note"><details><summary>note</summary>{escape(text)}</details></td>' if text else "<td></td>"
    if column == "weak":
        return "<td>weak</td>" if marked_weak(value) else "<td></td>"
    if column == "basis" and isinstance(detail, str) and detail:
        return f'<td title="{escape(detail)}">{escape(format_number(value))}</td>'
    if column == "item" and value in item_links:
        return f'<td><a href="{escape(item_links[value])}">{escape(value)}</a></td>'
    if column in NUMERIC:
        missing = value is None or (isinstance(value, float) and math.isnan(value))
        raw = "" if missing else repr(float(value))
        return f'<td class="number" data-value="{raw}">{escape(format_number(value))}</td>'
    return f"<td>{escape(format_number(value))}</td>"


def _rows(scoreboard: pd.DataFrame, item_links: Mapping[str, str]) -> str:
    rows = []
    for row, detail in zip(scoreboard.loc[:, list(COLUMNS)].itertuples(index=False), scoreboard["basis_detail"]):
        text = f"{row.item} {row.quantity}".lower()
        cells = "".join(_cell(c, v, item_links, detail if c == "basis" else "") for c, v in zip(COLUMNS, row))
        reading = row.reading if isinstance(row.reading, str) else ""
        rows.append(f'<tr data-verdict="{escape(row.verdict)}" data-paper="{escape(row.paper)}" '
                    f'data-reading="{escape(reading)}" data-weak="{"yes" if marked_weak(row.weak) else "no"}" '
                    f'data-origin="{escape(origin_kind(row.origin))}" data-text="{escape(text)}">{cells}</tr>')
    return "".join(rows)


def _options(label: str, element_id: str, values: list[str]) -> str:
    options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
    return (f'<label>{label} <select id="{element_id}"><option value="">all</option>{options}</select></label>')


def _how_to_read(scoreboard: pd.DataFrame, csv_path: str) -> str:
    """The folded explanation above the table: of the verdicts, or of a smoke run's states (no comparison)."""
    intro = (f'<details class="notes"><summary>Every reference value next to the reproduced one (also in '
             f'<code>{escape(csv_path)}</code>): how to read it</summary><p>')
    sorting = "Click a column header to sort; item ids link to the item on its paper's page.</p></details>"
    if is_smoke(scoreboard):
        return (intro + "This run used a preset with smaller sizes or other data than the paper's, so no row is "
                f"compared with the paper: a row is {smoke_states()}. " + sorting)
    return (intro + "A row matches when the reproduced value x, with its seed spread s, meets its rule "
            f"<code>compare</code> with the reported value r and the tolerance t ({escape(RULES)}). Only "
            "<em>default</em> readings of a <em>reproduction</em> count in the index's headline; a row is "
            f"<em>weak</em> when {escape(WEAK_MEANING)}. Hover a basis for where its tolerance comes from, an "
            "origin for where the number was computed (device, date, commit); open a note for why a row reads as "
            "it does. " + sorting)


def scoreboard_page(scoreboard: pd.DataFrame, item_links: Mapping[str, str], title: str, made_with: str,
                    csv_path: str) -> str:
    """The page's HTML; ``item_links`` maps the item ids that are on a page to ``<slug>.html#<item>``;
    ``csv_path`` is the scoreboard file the page was made from (named on the page)."""
    head = "".join(
        f'<th scope="col" data-type="{"number" if c in NUMERIC else "text"}">{escape(c)}</th>' for c in COLUMNS
    )
    papers = sorted(set(scoreboard["paper"].dropna().astype(str)))
    total = len(scoreboard)
    filters = (
        f'<form id="filters" class="filters" hidden>{_options("Verdict", VERDICT_FILTER, list(VERDICTS))}'
        f'{_options("Paper", PAPER_FILTER, papers)}{_options("Reading", READING_FILTER, list(READINGS))}'
        f'{_options("Weak", WEAK_FILTER, ["yes", "no"])}{_options("Origin", ORIGIN_FILTER, list(ORIGIN_KINDS))}'
        f'<label>Item or quantity contains '
        f'<input id="{TEXT_FILTER}" type="search" size="24"></label></form>'
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Scoreboard — {escape(title)}</title>{style_block(whole_page=True)}
</head>
<body>
<nav><a href="index.html">&larr; index: every paper and item</a></nav>
<h1>Scoreboard</h1>
{made_with}
{_how_to_read(scoreboard, csv_path)}
{filters}
<p id="{ROW_COUNT}" aria-live="polite">{total} of {total} rows shown</p>
<table id="{TABLE_ID}" class="data sortable"><thead><tr>{head}</tr></thead>
<tbody>{_rows(scoreboard, item_links)}</tbody></table>
<script>{SCRIPT}</script>
</body></html>
"""
