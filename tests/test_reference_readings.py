"""Every read-off value follows from where it was read (docs/decisions/README.md, "Read-offs"): each read-off row
records the coordinates it was read at (`read`), each read-off figure the ticks that calibrate its axes (`axes`),
and the value recomputed through them (isonorm.verdicts.readoff_values) is the one the reference file gives, to its
written digits. A value edited by hand, a coordinate miscopied or a tick moved fails here. The reference files as
written; no pipeline output is involved."""

from __future__ import annotations

import copy
import functools
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from isonorm.verdicts.readoff_values import axis_fit, recompute

REFERENCES = sorted((Path(__file__).resolve().parents[1] / "notebooks" / "reference").glob("*.yaml"))


class _TextFloats(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """YAML with every float kept as the text it is written as (its digits say its rounding)."""


_TextFloats.add_constructor("tag:yaml.org,2002:float", lambda loader, node: loader.construct_scalar(node))


@functools.cache
def written(path: Path) -> dict:
    """The reference file with each row's ``reported`` as written (its digits say its rounding), every other number
    as a number."""
    text = path.read_text()
    doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    literal = yaml.load(text, Loader=_TextFloats)
    for row, raw in zip(doc["references"], literal["references"]):
        row["reported"] = raw["reported"]
    return doc


def half_digit(text: object) -> float:
    """Half a unit in the last written digit of a number as written (``0.602`` -> 0.0005, ``-3.5`` -> 0.05)."""
    exponent = Decimal(str(text).strip()).as_tuple().exponent
    return 0.5 * 10.0 ** int(exponent)


def read_off_rows(doc: dict) -> list[dict]:
    return [row for row in doc["references"] if row.get("basis") == "read-off"]


def disagreement(row: dict, readoffs: dict) -> float:
    """How far the row's reported value lies from its recomputation, beyond half its last written digit."""
    value = recompute(row["read"], readoffs[row["item"]]["axes"], f"{row['item']}:{row['quantity']}")
    return abs(value - float(row["reported"])) - half_digit(row["reported"])


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: p.stem)
def test_every_read_off_records_where_it_was_read(path):
    doc = written(path)
    readoffs = doc.get("readoffs") or {}
    assert [item for item, entry in readoffs.items() if "axes" not in entry] == []
    assert [f"{r['item']}:{r['quantity']}" for r in read_off_rows(doc) if "read" not in r] == []


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: p.stem)
def test_every_read_off_value_follows_from_its_coordinates(path):
    doc = written(path)
    readoffs = doc.get("readoffs") or {}
    wrong = {f"{r['item']}:{r['quantity']}": r["reported"] for r in read_off_rows(doc)
             if "read" in r and disagreement(r, readoffs) > 1e-9}
    assert wrong == {}


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: p.stem)
def test_every_axis_fits_its_ticks_within_its_recorded_residual(path):
    doc = written(path)
    for item, entry in (doc.get("readoffs") or {}).items():
        for panel, ticks in (entry.get("axes") or {}).items():
            residual = axis_fit([[float(v), float(c)] for v, c in ticks])[2]
            assert residual <= float(entry["calibration"]["residual"]) + 1e-9, (item, panel, residual)


def test_a_hand_edited_read_off_fails():
    """The check can fail: the first read-off row of every file, its reported value moved by two of its last
    written digits (as a hand edit would), no longer follows from its coordinates."""
    for path in REFERENCES:
        doc = written(path)
        rows = [r for r in read_off_rows(doc) if "read" in r]
        if not rows:
            continue
        row = copy.deepcopy(rows[0])  # the cached file stays as written
        assert disagreement(row, doc["readoffs"]) <= 1e-9
        row["reported"] = str(Decimal(str(row["reported"])) + Decimal(4) * Decimal(str(half_digit(row["reported"]))))
        assert disagreement(row, doc["readoffs"]) > 0, path.stem


def test_half_a_written_digit():
    assert half_digit("0.602") == pytest.approx(0.0005) and half_digit("-3.5") == pytest.approx(0.05)
    assert half_digit("12") == pytest.approx(0.5) and half_digit("1.0e-3") == pytest.approx(0.00005)
