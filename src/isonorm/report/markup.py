"""HTML pieces shared by the paper pages and the index: styles, verdict cells, tables, the preset badge.

Everything is inline (no external CSS, fonts or scripts): the report must open offline (architecture §1, §10).
"""

from __future__ import annotations

import html
import math

import pandas as pd

from .comparison import describe_tolerance

# The paper-faithful configuration (architecture §4); any other preset is flagged on every page and item.
PAPER_PRESET = "paper"

VERDICT_COLOURS = {"match": "#d4edda", "mismatch": "#f8d7da", "not-run": "#e2e3e5", "no-reference": "#fff3cd"}

# For pages this package writes whole (the index); the notebook pages keep nbconvert's own layout.
PAGE_STYLE = "body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 75em; padding: 0 1em; }\n"

# For items, tables and badges, wherever they are shown.
ITEM_STYLE = """
table.data { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
table.data th, table.data td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; }
table.data th { background: #f4f4f4; }
figure.item { margin: 1.5em 0; padding: 0.5em; border-top: 1px solid #ddd; }
figure.item img { max-width: 100%; height: auto; }
figcaption .item-id { font-family: monospace; font-weight: bold; margin-right: 0.5em; }
.deviations { color: #8a4b00; }
.preset-badge { background: #ffcc00; color: #000; border-radius: 0.3em; padding: 0 0.4em; font-size: 0.85em; }
.preset-banner { background: #fff3cd; border: 1px solid #ffcc00; padding: 0.5em 1em; }
section.not-reproducible { border-left: 4px solid #999; padding-left: 1em; color: #444; }
""" + "".join(
    f"td.verdict-{name} {{ background: {colour}; }}\n" for name, colour in VERDICT_COLOURS.items()
)


def style_block(whole_page: bool = False) -> str:
    return f"<style>{(PAGE_STYLE if whole_page else '') + ITEM_STYLE}</style>"


def escape(text: object) -> str:
    return html.escape(str(text), quote=True)


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


def reference_table(scored: pd.DataFrame) -> str:
    """The "reported vs reproduced" table of one item, from rows of ``scoreboard.score``."""
    if scored.empty:
        return ""
    shown = pd.DataFrame({
        "quantity": scored["quantity"],
        "description": scored["description"].fillna(""),
        "kind": scored["kind"].fillna(""),
        "provenance": scored["provenance"].fillna(""),
        "reported": [
            "–" if pd.isna(r.compare) else describe_tolerance(r.reported, r.compare, r.tolerance)
            for r in scored.itertuples()
        ],
        "reproduced": [format_number(v) for v in scored["reproduced"]],
        "verdict": scored["verdict"],
        "source": scored["source"].fillna(""),
        "note": scored["note"].fillna(""),
    })
    return '<p class="reference-title">Reported vs reproduced</p>' + frame_table(shown)
