"""A default the documentation quotes is the default config.yaml holds (docs/architecture.md §11, "Settings").

The docs quote a default as its full key path from the top of config.yaml and its value, in code: `` `lu2024:
fnn: epochs: 10` `` (two keys at least). Every such quote is checked here against config.yaml, so a changed default cannot leave a
page saying the old one. A key without its full path (`` `sampler: cholesky` ``) names an option, not the
default, and is not checked; nor is a top-level key alone (`` `device: cpu` ``), which the docs use to name a
choice.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
# `key: key: …: value`, the first key a top-level key of config.yaml
QUOTE = re.compile(r"`((?:[a-z_][a-z0-9_]*: ){2,})([^`]+)`")


def quoted_defaults(text: str) -> list[tuple[list[str], str]]:
    """(key path, written value) of every quote whose first key is a top-level key of config.yaml."""
    quotes = []
    for keys, value in QUOTE.findall(text):
        path = keys.rstrip(": ").split(": ")
        if path[0] in CONFIG:
            quotes.append((path, value))
    return quotes


def resolve(path: list[str]):
    node = CONFIG
    for key in path:
        if not isinstance(node, dict) or key not in node:
            raise KeyError(": ".join(path))
        node = node[key]
    return node


def test_the_pattern_reads_a_full_path_and_skips_an_option():
    text = ("as `lu2024: fnn: epochs: 10` says; `sampler: cholesky` is an option, `device: cpu` a choice and "
            "`check: consistency` a field")
    assert quoted_defaults(text) == [(["lu2024", "fnn", "epochs"], "10")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_quoted_default_is_config_yamls(page):
    wrong = []
    for path, written in quoted_defaults(page.read_text(encoding="utf-8")):
        try:
            actual = resolve(path)
        except KeyError:
            wrong.append(f"{': '.join(path)}: no such key in config.yaml")
            continue
        if isinstance(actual, dict):
            continue  # a section named with a sample of its keys, e.g. `resources: {cost_table: auto, …}`
        if yaml.safe_load(written) != actual:
            wrong.append(f"{': '.join(path)}: the page says {written}, config.yaml {actual!r}")
    assert not wrong, wrong


def merged_sections() -> dict[tuple[str, str], set[str]]:
    """{(paper, shared section): the item sections the rules merge it under}, from the records' functions (the rules
    merge a shared section under each result key of the function their job runs, rules/common.smk item_settings)."""
    from isonorm.experiments.joudaki2023 import image_mlps, strengths
    from isonorm.experiments.meterez2024 import at_init
    from isonorm.items import paper_items

    def results_of_module(slug, module):
        return {key for item in paper_items(slug) for _, function in item.jobs if function.__module__ == module.__name__
                for key in item.results}

    return {("joudaki2023", "strengths"): set(strengths.STRENGTH_ITEMS),
            ("joudaki2023", "image_mlp"): results_of_module("joudaki2023", image_mlps),
            ("meterez2024", "at_init"): set(at_init.SWEEP_ITEMS)}


def test_the_shared_sections_table_names_every_item_section_its_section_is_merged_under():
    """docs/configuration.md's table of shared sections: a row that lists its item sections (without "…") lists
    all, so an item added to a shared section's function cannot leave the table behind; the papers' row lists them
    all."""
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\w+) \| `(\w+)` \| ([^|]*) \|$", text, re.MULTILINE)
    listed = {(paper, shared): set(re.findall(r"`(\w+)`", merged)) for paper, shared, merged in rows
              if "`" in merged and "…" not in merged}
    assert listed == merged_sections()
    (papers,) = re.findall(r"^\| (`\w+`(?:, `\w+`)+) \| one section per paper", text, re.MULTILINE)
    assert re.findall(r"`(\w+)`", papers) == sorted(CONFIG["papers"])
