"""Each rules/<slug>.smk opens with its paper's contents, item id by item id, and they stay true: every item the
notebook names is listed once, under a rule of the file (or "notebook" for an item drawn without results), and
every rule of the file is listed (docs/architecture.md §11, "Per-paper rules"). With the rules naming their
library functions in full, `grep -rn '"<item id>"\\|<item id>:' rules notebooks` finds an item's rule, function
and notebook cell."""

from __future__ import annotations

import re

import pytest

from conftest import PAPERS, REPO
from isonorm.report.ids import named_items
from isonorm.workflow import resolve_function

CONTENTS_START = "# Contents, item id: rule"
RULE = re.compile(r"^rule (\w+):", re.MULTILINE)
EXPERIMENT = re.compile(r'experiment\(\s*"([\w.]+:\w+)"')


def contents(slug: str) -> dict[str, list[str]]:
    """{item id: rules} of the contents at the top of rules/<slug>.smk."""
    lines = (REPO / "rules" / f"{slug}.smk").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(CONTENTS_START))
    block = []
    for line in lines[start + 1:]:
        if not line.startswith("#   "):
            break
        block.append(line[1:].strip())
    text = " ".join(block)
    entry = re.compile(rf"((?:{slug}-[a-z0-9-]+,\s*)*{slug}-[a-z0-9-]+):\s*((?:\w+,\s*)*\w+)\s+—")
    listed: dict[str, list[str]] = {}
    for ids, rules in entry.findall(text):
        for item in re.split(r",\s*", ids):
            assert item not in listed, f"{slug}: {item} listed twice"
            listed[item] = re.split(r",\s*", rules)
    return listed


@pytest.mark.parametrize("slug", PAPERS)
def test_the_contents_list_every_item_of_the_notebook_under_a_rule_of_the_file(slug):
    listed = contents(slug)
    notebook = named_items((REPO / "notebooks" / f"{slug}.py").read_text(encoding="utf-8"), slug)
    assert set(listed) == set(notebook), {"not in the notebook": sorted(set(listed) - set(notebook)),
                                          "not in the contents": sorted(set(notebook) - set(listed))}
    rules = set(RULE.findall((REPO / "rules" / f"{slug}.smk").read_text(encoding="utf-8")))
    named = {rule for entry in listed.values() for rule in entry} - {"notebook"}
    assert named == rules, {"unknown": sorted(named - rules), "unlisted": sorted(rules - named)}


@pytest.mark.parametrize("slug", PAPERS)
def test_every_referenced_item_is_named_by_the_notebook(slug):
    from isonorm.report import load_references

    referenced = set(load_references(REPO / "notebooks" / "reference" / f"{slug}.yaml")["item"])
    named = set(named_items((REPO / "notebooks" / f"{slug}.py").read_text(encoding="utf-8"), slug))
    assert referenced <= named, sorted(referenced - named)


def test_every_rule_names_a_library_function_that_exists_in_full():
    """architecture §11: a search for the function's full path finds its rule."""
    for smk in sorted((REPO / "rules").glob("*.smk")):
        for spec in EXPERIMENT.findall(smk.read_text(encoding="utf-8")):
            assert spec.startswith("isonorm."), f"{smk.name}: {spec}"
            assert callable(resolve_function(spec)), f"{smk.name}: {spec}"
