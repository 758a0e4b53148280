"""Paper slugs and item ids (architecture §2, **contract**).

An item id is ``<slug>-<item>`` in lower case (``daneshmand2021-fig2b``, ``meterez2024-tabled1``). It is the
HTML ``id`` of the item's element in the report, so ``report/<slug>.html#<item>`` links to it; hence only
characters that are valid in an HTML id *and* need no escaping in a URL fragment or a CSS selector.
"""

from __future__ import annotations

import re

from ..outputs import is_paper_slug as is_slug  # the one test of a slug's form


# Lower-case letters and digits in hyphen-separated words, e.g. ``joudaki2023-figb5``, ``lu2024-apptable3``.
ITEM_ID_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def paper_of(item: str) -> str:
    """The slug an item id belongs to: everything before the first hyphen."""
    return item.split("-", 1)[0]


def check_slug(slug: str) -> str:
    if not is_slug(slug):
        raise ValueError(f"invalid paper slug {slug!r}: write the first author's name and the year in lower case, "
                         "e.g. 'lu2024' (architecture §2)")
    return slug


def check_item_id(item: str, slug: str | None = None) -> str:
    """``item`` itself if it is a valid item id (of paper ``slug`` when given), else a ValueError saying why."""
    if not isinstance(item, str) or not ITEM_ID_PATTERN.fullmatch(item):
        raise ValueError(
            f"invalid item id {item!r}: write it as '<slug>-<item>' in lower-case letters, digits and hyphens, "
            "e.g. 'daneshmand2021-fig2b' (architecture §2)"
        )
    if slug is not None and paper_of(item) != slug:
        raise ValueError(f"item id {item!r} does not belong to paper {slug!r}; start it with '{slug}-'")
    return item


def named_items(notebook_text: str, slug: str) -> list[str]:
    """The item ids of paper ``slug`` that a notebook names as string literals (``"lu2024-table2"``), in order of
    first appearance: every item cell names its id literally (architecture §11), so this is the paper's list of
    items as its page renders them."""
    literal = re.compile(rf"""["']({re.escape(slug)}(?:-[a-z0-9]+)+)["']""")
    return list(dict.fromkeys(literal.findall(notebook_text)))
