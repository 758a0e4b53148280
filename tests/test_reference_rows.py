"""Every quantity an item measures has its reference row (docs/adding.md, step 5): a quantity without one is scored
`no-reference`, which no verdict counts, so a missing row would pass silently. The reference files, the records and
the recipe's list of a row's keys agree as written; the quick run shows what the claims functions measure."""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

import pandas as pd
import pytest

from conftest import PAPERS, QUICK, REPO
from isonorm.items import paper_items
from isonorm.verdicts import load_references
from isonorm.verdicts.comparison import NOT_RUN
from isonorm.verdicts.references import OPTIONAL_KEYS, REFERENCE_KEYS, load_unscored, unscored_reason

# docs/adding.md, step 5: the bullets "required: ..." and "optional: ..." of a row's keys, each key in backquotes
KEYS = re.compile(r"^   - (required|optional): (.*?)(?=^   - |^\d+\. |\Z)", re.MULTILINE | re.DOTALL)


def reference_file(root, slug: str):
    return root / "notebooks" / "reference" / f"{slug}.yaml"


def test_the_recipe_lists_the_keys_of_a_reference_row():
    step = (REPO / "docs" / "adding.md").read_text(encoding="utf-8").split("5. **Reference.**", 1)[1]
    step = step.split("\n6. **", 1)[0]
    listed = {kind: set(re.findall(r"`(\w+)`", text)) for kind, text in KEYS.findall(step)}
    assert listed == {"required": set(REFERENCE_KEYS), "optional": set(OPTIONAL_KEYS)}, listed


@pytest.mark.parametrize("slug", PAPERS)
def test_the_items_with_reference_rows_are_those_that_claim(slug):
    """An item with a claims function and no row would be scored no-reference throughout; a row of an item that
    claims nothing (or of no item) would stay not-run."""
    claiming = {item.id for item in paper_items(slug) if item.claims is not None}
    referenced = set(load_references(reference_file(REPO, slug))["item"])
    assert referenced == claiming, {"claims, no row": sorted(claiming - referenced),
                                    "rows, no claims": sorted(referenced - claiming)}


@pytest.mark.integration
def test_every_quantity_the_quick_run_claims_has_its_row_or_a_reason_and_every_item_with_rows_claims(quick_run):
    """The claims are known only after a run: in the quick run's scoreboard a claimed quantity that no row lists has
    no `compare` (its verdict, in a smoke run, is only `computed`). A name without a number names no setting, so a
    paper run claims it too: it needs its row, or its reference file's `unscored` says why the paper gives none (a
    name with one, `_d8`, may be a quick size the paper's rows name otherwise). An item none of whose rows was
    claimed did not run, or its claims function does not reach it (a stale list of ids in it)."""
    board = pd.read_csv(quick_run / QUICK["results"] / "scoreboard.csv")
    unscored = {item: why for slug in PAPERS for item, why in load_unscored(reference_file(quick_run, slug)).items()}
    claimed = board[board["compare"].isna()]
    named = claimed[~claimed["quantity"].str.contains(r"\d")]
    silent = [(i, q) for i, q in zip(named["item"], named["quantity"]) if unscored_reason(unscored, i, q) is None]
    assert not silent, silent
    stale = [(item, pattern) for item, patterns in unscored.items() for pattern in patterns
             if not any(fnmatchcase(q, pattern) for q in claimed.loc[claimed["item"] == item, "quantity"])]
    assert not stale, stale  # a reason for a quantity no claims measure any more
    ran = board.groupby("item")["verdict"].agg(lambda verdicts: (verdicts != NOT_RUN).any())
    expected = {item for slug in PAPERS for item in load_references(reference_file(quick_run, slug))["item"]}
    assert set(ran.index) >= expected and ran[sorted(expected)].all(), sorted(ran[~ran].index)
