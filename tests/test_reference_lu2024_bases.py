"""notebooks/reference/lu2024.yaml: every tolerance has a basis and follows it (docs/decisions/lu2024.md,
"Tolerances"). Checks the reference file's own format and internal consistency only."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from isonorm.verdicts.references import BASES, load_references

PATH = Path(__file__).resolve().parents[1] / "notebooks" / "reference" / "lu2024.yaml"
# A row stating the difference of two printed values carries both roundings: twice half a unit (Tolerances).
DIFFERENCE_MULTIPLE = 2


def raw_rows() -> list[dict[str, str]]:
    """The rows as written: every scalar a string (yaml.BaseLoader), so the reported literal keeps its digits."""
    return yaml.load(PATH.read_text(), Loader=yaml.BaseLoader)["references"]


def half_unit(literal: str) -> Decimal:
    """Half a unit in the last written digit: '0.035' -> 0.0005, '98.22' -> 0.005, '1.0' -> 0.05, '0' -> 0.5."""
    return Decimal(5) * Decimal(10) ** (Decimal(literal).as_tuple().exponent - 1)


@pytest.mark.parametrize("literal, expected", [("0.035", "0.0005"), ("98.22", "0.005"), ("1.0", "0.05"),
                                               ("0.070", "0.0005"), ("0.37", "0.005"), ("12", "0.5")])
def test_half_unit_reads_the_written_digits(literal, expected):
    assert half_unit(literal) == Decimal(expected)


def test_every_row_has_a_basis():
    missing = [(r["item"], r["quantity"]) for r in raw_rows() if r.get("basis") not in BASES]
    assert not missing, missing


def test_digits_rows_have_half_a_unit_of_the_printed_digit():
    wrong = []
    for row in raw_rows():
        if row["basis"] != "digits":
            continue
        multiple = DIFFERENCE_MULTIPLE if row["provenance"] == "derived" else 1
        if Decimal(row["tolerance"]) != multiple * half_unit(row["reported"]):
            wrong.append((row["item"], row["quantity"], row["reported"], row["tolerance"]))
    assert not wrong, wrong


def test_read_off_rows_have_their_figures_precision():
    document = yaml.load(PATH.read_text(), Loader=yaml.BaseLoader)
    readoffs = document.get("readoffs", {})
    for row in document["references"]:
        if row["basis"] == "read-off":
            assert row["item"] in readoffs, row["item"]
            multiple = DIFFERENCE_MULTIPLE if row["provenance"] == "derived" else 1
            assert Decimal(row["tolerance"]) == multiple * Decimal(readoffs[row["item"]]["precision"]), row


def test_claims_are_relations_with_no_margin_of_their_own():
    """A claim's margin is the reproduced value's seed spread: le/ge/true with tolerance 0."""
    for row in raw_rows():
        if row["basis"] == "claim":
            assert row["compare"] in ("le", "ge", "true") and Decimal(row["tolerance"]) == 0, row


def test_alternative_and_fitted_readings_say_why():
    frame = load_references(PATH)
    unexplained = frame[frame["reading"].isin(["alternative", "fitted"]) & (frame["note"].str.strip() == "")]
    assert unexplained.empty, unexplained[["item", "quantity"]]


def test_contrasts_name_a_quantity_of_the_same_item():
    frame = load_references(PATH)
    quantities = set(zip(frame["item"], frame["quantity"]))
    contrasted = frame[frame["contrast"].notna() & (frame["contrast"] != "")]
    assert not contrasted.empty
    for row in contrasted.itertuples():
        assert (row.item, row.contrast) in quantities, (row.item, row.quantity, row.contrast)
