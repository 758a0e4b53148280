"""The tolerances of notebooks/reference/meterez2024.yaml have their stated basis (docs/decisions/meterez2024.md,
"Tolerances"): a format and consistency check of the reference file itself, no pipeline output involved."""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

from isonorm.verdicts.references import BASES, load_references

PATH = Path(__file__).resolve().parents[1] / "notebooks" / "reference" / "meterez2024.yaml"
# A read-off row whose tolerance is not the figure's precision says so: "tolerance K × the read-off precision".
MULTIPLE = re.compile(r"(?i)tolerance ([0-9./]+) × the read-off precision")


@pytest.fixture(scope="module")
def raw() -> dict:
    return yaml.safe_load(PATH.read_text())


@pytest.fixture(scope="module")
def literals() -> list[dict]:
    """The rows as strings (BaseLoader): the reported values exactly as written."""
    return yaml.load(PATH.read_text(), Loader=yaml.BaseLoader)["references"]


def test_file_loads_and_every_row_has_a_basis(raw):
    load_references(PATH)
    missing = [row["quantity"] for row in raw["references"] if row.get("basis") not in BASES]
    assert not missing


def test_digits_rows_are_half_a_unit_of_the_printed_last_digit(literals):
    for row in (r for r in literals if r["basis"] == "digits"):
        reported = Decimal(row["reported"])
        half_unit = Decimal(5).scaleb(reported.as_tuple().exponent - 1)
        assert Decimal(row["tolerance"]) == half_unit, (row["item"], row["quantity"], row["reported"])


def test_read_off_rows_use_their_figures_precision_or_state_the_multiple(raw):
    readoffs = raw["readoffs"]
    for row in (r for r in raw["references"] if r["basis"] == "read-off"):
        precision = readoffs[row["item"]]["precision"]
        stated = MULTIPLE.search(row.get("note", ""))
        factor = float(Fraction(stated.group(1))) if stated else 1.0
        assert row["tolerance"] == pytest.approx(factor * precision, rel=1e-3), (row["item"], row["quantity"])


def test_claims_have_no_tolerance_beyond_the_seed_spread(raw):
    for row in (r for r in raw["references"] if r["basis"] == "claim"):
        assert row.get("tolerance", 0) == 0 and row["compare"] in ("le", "ge", "true"), row["quantity"]


def test_alternative_and_fitted_rows_say_why_and_contrasts_exist(raw):
    rows = raw["references"]
    quantities = {(r["item"], r["quantity"]) for r in rows}
    for row in rows:
        if row.get("reading", "default") != "default":
            assert row.get("note", "").strip(), row["quantity"]
        if "contrast" in row:
            assert (row["item"], row["contrast"]) in quantities, row["quantity"]
