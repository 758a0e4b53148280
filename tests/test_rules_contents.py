"""Each rules/<slug>.smk opens with its paper's contents, item id by item id, and they stay true: every item the
notebook names is listed once, under a rule of the file (or "notebook" for an item drawn without results), and
every rule of the file is listed (docs/architecture.md §11, "Per-paper rules"). The rules name their library
functions as Python references (`experiment(isonorm.experiments.<slug>.<module>.<function>, ...)`), never as a
string, so that an editor follows them and a rename reaches them."""

from __future__ import annotations

import re

import pytest

from conftest import PAPERS, REPO
from isonorm.report.ids import named_items
from isonorm.callables import resolve

CONTENTS_START = "# Contents, item id: rule"
RULE = re.compile(r"^(?:rule (\w+):|use rule \w+ as (\w+) with:)", re.MULTILINE)
# a library function's name written as a string ("package.module:function"), where a rule should hold the function
NAMED_BY_STRING = re.compile(r"""["'](isonorm\.[\w.]+:\w+)["']""")
EXPERIMENT = re.compile(r"experiment\(\s*(isonorm\.[\w.]+)\.(\w+),")
CLAIMS = re.compile(r"^\s+(isonorm\.experiments\.[\w.]+)\.(\w+),$", re.MULTILINE)


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
    rules = {plain or derived for plain, derived in RULE.findall((REPO / "rules" / f"{slug}.smk").read_text("utf-8"))}
    named = {rule for entry in listed.values() for rule in entry} - {"notebook"}
    assert named == rules, {"unknown": sorted(named - rules), "unlisted": sorted(rules - named)}


@pytest.mark.parametrize("slug", PAPERS)
def test_every_referenced_item_is_named_by_the_notebook(slug):
    from isonorm.report import load_references

    referenced = set(load_references(REPO / "notebooks" / "reference" / f"{slug}.yaml")["item"])
    named = set(named_items((REPO / "notebooks" / f"{slug}.py").read_text(encoding="utf-8"), slug))
    assert referenced <= named, sorted(referenced - named)


def test_rules_hold_their_library_functions_not_their_names():
    """No rule or claims list names a function as a string; each reference resolves to a function of the library
    (the job receives its name, isonorm.callables.name_of)."""
    referenced = 0
    for smk in sorted((REPO / "rules").glob("*.smk")):
        text = smk.read_text(encoding="utf-8")
        assert not NAMED_BY_STRING.findall(text), f"{smk.name} names functions as strings: {NAMED_BY_STRING.findall(text)}"
        for module, name in [*EXPERIMENT.findall(text), *CLAIMS.findall(text)]:
            assert callable(resolve(f"{module}:{name}")), f"{smk.name}: {module}.{name}"
            referenced += 1
    assert referenced >= 30  # every experiment rule and every claims function of the four papers
