"""notebooks/reference/daneshmand2021.yaml: every tolerance has the basis it states (docs/decisions/
daneshmand2021.md, "Tolerances"). The file's own format and consistency only; no pipeline output is involved."""

import re
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from isonorm.verdicts.references import load_references

PATH = Path(__file__).resolve().parents[1] / "notebooks" / "reference" / "daneshmand2021.yaml"


# Decision B3: Fig. 3's boundary is placed on an octave grid of d, so it is known to half an octave.
GRID_MARGINS = {"boundary_log2_over_curve": Decimal("0.5"), "boundary_log2_over_curve_offset": Decimal("0.5")}


def literal_rows() -> list[dict]:
    """The rows as written: BaseLoader keeps every scalar a string, so 0.70 keeps its last digit."""
    return yaml.load(PATH.read_text(), Loader=yaml.BaseLoader)["references"]


def readoffs() -> dict:
    return yaml.load(PATH.read_text(), Loader=yaml.BaseLoader).get("readoffs", {})


def half_unit_of_last_digit(literal: str) -> Decimal:
    """0.035 -> 0.0005, -3.0 -> 0.05, 12 -> 0.5: half a unit in the last written digit."""
    return Decimal(1).scaleb(Decimal(literal).as_tuple().exponent) / 2


def row_id(row: dict) -> str:
    return f"{row['item']}:{row['quantity']}"


ROWS = literal_rows()


def test_half_unit_of_last_digit():
    assert half_unit_of_last_digit("0.035") == Decimal("0.0005")
    assert half_unit_of_last_digit("-3.0") == Decimal("0.05")
    assert half_unit_of_last_digit("12") == Decimal("0.5")


def test_the_file_loads_with_its_bases():
    frame = load_references(PATH)
    assert frame.basis.notna().all() and len(frame) == len(ROWS)


@pytest.mark.parametrize("row", ROWS, ids=row_id)
def test_every_row_states_its_basis(row):
    assert row.get("basis") in ("digits", "read-off", "claim", "formula")


def test_digits_tolerance_is_half_a_unit_of_the_printed_value():
    for row in (r for r in ROWS if r.get("basis") == "digits"):  # none today: the paper prints no value it scores
        assert Decimal(row["tolerance"]) == half_unit_of_last_digit(row["reported"]), row_id(row)


@pytest.mark.parametrize("row", [r for r in ROWS if r.get("basis") == "read-off"], ids=row_id)
def test_read_off_tolerance_is_its_figures_precision(row):
    """Or the multiple its note states, for a quantity derived from several read-offs ("tolerance 2 × the read-off
    precision": a difference of two)."""
    entry = readoffs()[row["item"]]
    stated = re.search(r"tolerance (\d+) × the read-off precision", row.get("note", ""))
    assert Decimal(row["tolerance"]) == Decimal(stated.group(1) if stated else 1) * Decimal(entry["precision"])
    assert row["provenance"] == "read-off"


@pytest.mark.parametrize("row", [r for r in ROWS if r.get("basis") == "claim"], ids=row_id)
def test_a_claim_has_no_margin_but_its_seed_spread(row):
    """A relation the paper states and no margin it states: the reproduced value's spread is the margin; the one
    exception is Fig. 3's boundary, located on this run's own octave grid of d, to half an octave (decision B3)."""
    assert Decimal(row["tolerance"]) == GRID_MARGINS.get(row["quantity"], 0) and row["kind"] == "claim"


@pytest.mark.parametrize("row", [r for r in ROWS if r.get("reading", "default") != "default"], ids=row_id)
def test_alternative_and_fitted_readings_say_why(row):
    assert row.get("note", "").strip()


def test_every_read_off_figure_is_used_and_says_how():
    used = {r["item"] for r in ROWS if r.get("basis") == "read-off"}
    assert used == set(readoffs())
    for entry in readoffs().values():
        assert entry["how"].strip() and Decimal(entry["precision"]) > 0


def test_contrasts_name_another_row_of_the_same_item():
    for row in (r for r in ROWS if "contrast" in r):
        assert row["contrast"] != row["quantity"]
        assert any(o["item"] == row["item"] and o["quantity"] == row["contrast"] for o in ROWS), row_id(row)
