"""The item grid of the index: every item of every paper as a tile coloured by its worst verdict.

A tile counts only the item's headline rows, default readings of a reproduction (``scoreboard.headline_rows``):
an alternative or fitted reading or a consistency check never colours it (docs/decisions/README.md, "Verdicts").

Item ids are read from the rendered paper pages (elements of class ``item`` with an ``id``, as
``notebook.ItemRenderer`` writes them), so that a tile only links to an id that exists. Items the scoreboard
lists but no page carries are shown as plain text.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Mapping

import pandas as pd

from ..verdicts.comparison import (COMPUTED, FAILED, INCONCLUSIVE, MATCH, MISMATCH, NO_REFERENCE, NOT_PRODUCED, NOT_RUN,
                         VERDICTS)
from ..verdicts.ids import paper_of
from .markup import NOT_REPRODUCIBLE, escape
from ..verdicts.scoreboard import headline_rows

# Worst first: the colour of a tile is the first of these that any of its reference values has.
WORST_FIRST = (FAILED, MISMATCH, INCONCLUSIVE, NOT_RUN, NOT_PRODUCED, MATCH, COMPUTED)
# Tile states in legend order, with the words the legend uses.
TILE_STATES = {
    MATCH: "match", MISMATCH: "mismatch (at least one value)", FAILED: "failed (at least one value)",
    INCONCLUSIVE: "inconclusive (at least one value)",
    NOT_RUN: "not run (at least one value)",
    NOT_PRODUCED: "not produced at these sizes (at least one value)", COMPUTED: "computed (smoke run)",
    NOT_REPRODUCIBLE: "not reproducible", NO_REFERENCE: "no reference values",
}


class _PageItems(HTMLParser):
    """Item ids of one page in page order, with the classes of their element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.items: dict[str, set[str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        if "item" in classes and attributes.get("id"):
            self.items.setdefault(attributes["id"], classes)


def page_items(page: str | Path) -> dict[str, set[str]]:
    """``{item id: classes}`` of the items on a rendered page, in page order; empty when the page is missing."""
    page = Path(page)
    if not page.is_file():
        return {}
    parser = _PageItems()
    parser.feed(page.read_text(encoding="utf-8", errors="replace"))
    parser.close()
    return parser.items


@dataclass
class Tile:
    item: str
    state: str  # a key of TILE_STATES
    counts: dict[str, int] = field(default_factory=dict)
    href: str | None = None  # None: on no page, shown as plain text

    @property
    def tooltip(self) -> str:
        counts = ", ".join(f"{n} {v}" for v, n in self.counts.items() if n)
        parts = [self.item]
        if self.state == NOT_REPRODUCIBLE:
            parts.append("not reproducible")
        parts.append(counts or "no reference values")
        if self.href is None:
            parts.append("not on any page")
        return ": ".join(parts[:2]) + "".join(f"; {p}" for p in parts[2:])

    def html(self) -> str:
        label = escape(self.item.split("-", 1)[-1])
        attrs = f'class="tile verdict-{self.state}" data-item="{escape(self.item)}" title="{escape(self.tooltip)}"'
        if self.href is None:
            return f"<span {attrs}>{label}</span>"
        return f'<a {attrs} href="{escape(self.href)}">{label}</a>'


def tile_state(counts: Mapping[str, int], classes: set[str]) -> str:
    """The worst verdict among an item's reference values; the page's ``not-reproducible`` mark comes first."""
    if NOT_REPRODUCIBLE in classes:
        return NOT_REPRODUCIBLE
    for verdict in WORST_FIRST:
        if counts.get(verdict, 0):
            return verdict
    return NOT_RUN if NOT_RUN in classes else NO_REFERENCE


def item_tiles(report_dir: Path, papers: list[Mapping[str, str]], scoreboard: pd.DataFrame) -> dict[str, list[Tile]]:
    """Tiles per paper slug: the page's items in page order, then scoreboard items on no page (unlinked)."""
    counts = {
        item: {v: int(n) for v, n in group.value_counts().reindex(list(VERDICTS), fill_value=0).items()}
        for item, group in headline_rows(scoreboard).groupby("item", sort=False)["verdict"]
    }
    pages = {p["slug"]: p["html"] for p in papers}
    slugs = list(pages) + [s for s in dict.fromkeys(map(paper_of, counts)) if s not in pages]
    grid: dict[str, list[Tile]] = {}
    for slug in slugs:
        on_page = page_items(report_dir / pages[slug]) if slug in pages else {}
        tiles = [
            Tile(item, tile_state(counts.get(item, {}), classes), counts.get(item, {}), f"{pages[slug]}#{item}")
            for item, classes in on_page.items()
        ]
        tiles += [
            Tile(item, tile_state(c, set()), c)
            for item, c in counts.items() if paper_of(item) == slug and item not in on_page
        ]
        grid[slug] = tiles
    return grid


def linked_items(grid: Mapping[str, list[Tile]]) -> dict[str, str]:
    """``{item id: href}`` of every item that is on a page."""
    return {tile.item: tile.href for tiles in grid.values() for tile in tiles if tile.href is not None}


# A run compared to the paper never has a smoke run's states, and a smoke run never has a verdict against the paper:
# the legend leaves out the other kind's.
_SMOKE_STATES = {COMPUTED, NOT_PRODUCED}


def legend(smoke: bool = False) -> str:
    swatches = "".join(f'<span class="swatch verdict-{s}">{escape(words)}</span>' for s, words in TILE_STATES.items()
                       if (s in _SMOKE_STATES) == smoke or s in (FAILED, NOT_RUN, NOT_REPRODUCIBLE, NO_REFERENCE))
    return f'<p class="legend">{swatches}</p>'


def grid_html(grid: Mapping[str, list[Tile]], pages: Mapping[str, str]) -> str:
    """The legend and one group of tiles per paper; ``pages`` maps the slugs whose page exists to it."""
    groups = []
    for slug, tiles in grid.items():
        states = Counter(t.state for t in tiles)
        summary = ", ".join(f"{states[s]} {s}" for s in TILE_STATES if states[s])
        title = f'<a href="{escape(pages[slug])}">{escape(slug)}</a>' if slug in pages else escape(slug)
        body = "".join(t.html() for t in tiles) or "<em>no items</em>"
        groups.append(
            f'<div class="item-group" id="items-{escape(slug)}"><h3>{title}<span class="counts">'
            f'{len(tiles)} item{"" if len(tiles) == 1 else "s"}{": " + summary if summary else ""}</span></h3>'
            f'<div class="tiles">{body}</div></div>'
        )
    smoke = any(t.state in _SMOKE_STATES for tiles in grid.values() for t in tiles)
    return legend(smoke) + "".join(groups)
