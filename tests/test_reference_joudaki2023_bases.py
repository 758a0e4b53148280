"""notebooks/reference/joudaki2023.yaml: every tolerance has the basis it states (docs/decisions/joudaki2023.md,
"Tolerances"). The reference file's own format and consistency only; no pipeline output is involved."""

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from isonorm.verdicts.references import load_references

PATH = Path(__file__).resolve().parents[1] / "notebooks" / "reference" / "joudaki2023.yaml"
# As written: the BaseLoader keeps every scalar a string, so 1.120 keeps its last digit.
DOC = yaml.load(PATH.read_text(), Loader=yaml.BaseLoader)
ROWS, READOFFS = DOC["references"], DOC["readoffs"]
# "Tolerances": a row that differences two read-offs of its figure (the largest difference of two curves on the
# authors' figure, against which "the curves coincide" is scored) gets twice the figure's precision; a row that
# reads a layer index off the x-axis gets one layer.
DIFFERENCE_PREFIXES = ("max_log10_diff_", "max_log10_spread_", "max_log10_excess_")
LAYER_PREFIXES = ("last_finite_layer_", "first_layer_")
LAYER_PRECISION = Decimal(1)
# "Tolerances": the claims whose margin the decision states (all others have none but the seed spread).
STATED_MARGINS = {"init_isometry_beta_rank_correlation": Decimal("0.06"), "max_relative_change_deepest": Decimal(0)}


def name(row: dict) -> str:
    return f"{row['item']}:{row['quantity']}"


def rows_with(basis: str) -> list[dict]:
    return [r for r in ROWS if r.get("basis") == basis]


def half_unit(literal: str) -> Decimal:
    """Half a unit in the last written digit: 1.120 -> 0.0005, 2.0 -> 0.05, 21 -> 0.5."""
    return Decimal(1).scaleb(Decimal(literal).as_tuple().exponent) / 2


def test_half_unit():
    assert (half_unit("1.120"), half_unit("-0.5"), half_unit("21")) == (Decimal("0.0005"), Decimal("0.05"),
                                                                         Decimal("0.5"))


def test_every_row_has_a_basis_and_the_file_loads():
    frame = load_references(PATH)
    assert len(frame) == len(ROWS)
    assert set(frame.basis) <= {"digits", "read-off", "claim", "formula"} and frame.basis.notna().all()


@pytest.mark.parametrize("row", rows_with("digits"), ids=name)
def test_digits_tolerance_is_half_a_unit_of_the_printed_literal(row):
    assert Decimal(row["tolerance"]) == half_unit(row["reported"])


@pytest.mark.parametrize("row", rows_with("read-off"), ids=name)
def test_read_off_tolerance_is_its_figures_precision(row):
    precision = Decimal(READOFFS[row["item"]]["precision"])
    if row["quantity"].startswith(LAYER_PREFIXES):
        precision = LAYER_PRECISION
    elif row["quantity"].startswith(DIFFERENCE_PREFIXES):
        precision *= 2
    assert Decimal(row["tolerance"]) == precision


@pytest.mark.parametrize("row", rows_with("claim"), ids=name)
def test_a_claim_has_no_margin_but_the_one_its_decision_states(row):
    assert row["kind"] == "claim" and row["compare"] in ("le", "ge", "true")
    assert Decimal(row.get("tolerance", "0")) == STATED_MARGINS.get(row["quantity"], Decimal(0))


@pytest.mark.parametrize("row", rows_with("formula"), ids=name)
def test_a_formula_row_is_scored_to_its_printed_digits_or_exactly(row):
    assert row["compare"] == "true" or Decimal(row["tolerance"]) <= half_unit(row["reported"])


@pytest.mark.parametrize("row", [r for r in ROWS if r.get("reading", "default") != "default"
                                 or r.get("check") == "consistency"], ids=name)
def test_alternative_fitted_and_consistency_rows_say_why(row):
    assert row.get("note", "").strip()


def test_fig8as_width_300_is_an_alternative_not_a_fit():
    """Decision D22: read off the authors' vector file, Fig. 8a agrees with the caption's width, so the width-300
    rows no longer fit anything; they show how far a narrower network lies from the figure."""
    narrow = [r for r in ROWS if r["item"] == "joudaki2023-fig8a" and r["quantity"].endswith("_d300")]
    assert narrow and all(r.get("reading") == "alternative" for r in narrow)
    assert not [name(r) for r in ROWS if r.get("reading") == "fitted"]


def test_every_readoff_entry_is_used_and_says_how():
    assert {r["item"] for r in rows_with("read-off")} == set(READOFFS)
    assert all(entry["how"].strip() and Decimal(entry["precision"]) > 0 for entry in READOFFS.values())


def test_a_contrast_names_another_row_of_the_same_item():
    quantities = {(r["item"], r["quantity"]) for r in ROWS}
    for row in (r for r in ROWS if "contrast" in r):
        assert row["contrast"] != row["quantity"] and (row["item"], row["contrast"]) in quantities, name(row)
