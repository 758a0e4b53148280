"""Every read-off row names a calibrated source (docs/decisions/README.md, "Read-offs"): the reference files as
written, and the loader's refusal of a read-off without one. No pipeline output is involved."""

import copy
from pathlib import Path

import pytest
import yaml

from isonorm.verdicts.references import ReferenceFormatError, load_references

REFERENCES = sorted((Path(__file__).resolve().parents[1] / "notebooks" / "reference").glob("*.yaml"))
COMMIT = "0123456789abcdef0123456789abcdef01234567"
ENTRY = {"scale": "log10", "precision": 0.01,
         "source": {"kind": "vector-pdf", "repo": "owner/name", "commit": COMMIT, "path": "plots/fig.pdf"},
         "calibration": {"anchors": "y ticks 10^-1 and 10^1", "per": "44 pt per decade", "residual": 0.002},
         "how": "the curve's path at x = 3"}


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: p.stem)
def test_every_read_off_row_names_a_calibrated_source(path):
    frame = load_references(path)  # the loader refuses a read-off row without a calibrated source
    read_off = frame[(frame["provenance"] == "read-off") | (frame["basis"] == "read-off")]
    for row in read_off.itertuples():
        assert " from " in row.basis_detail or row.basis_detail.startswith(("vector-pdf", "notebook-image",
                                                                             "paper-pdf")), row
        assert "@" in row.basis_detail, row  # owner/name@commit:path


@pytest.mark.parametrize("path", REFERENCES, ids=lambda p: p.stem)
def test_every_readoffs_entry_is_used_and_no_finer_than_its_calibration(path):
    doc = yaml.safe_load(path.read_text())
    used = {r["item"] for r in doc["references"] if "read-off" in (r.get("provenance"), r.get("basis"))}
    readoffs = doc.get("readoffs") or {}
    assert set(readoffs) == used
    for entry in readoffs.values():
        assert float(entry["precision"]) >= float(entry["calibration"]["residual"])


def document(tmp_path, readoff):
    doc = {"paper": "lu2024", "title": "t", "readoffs": {"lu2024-fig2": readoff},
           "references": [{"item": "lu2024-fig2", "quantity": "q", "description": "d", "reported": 1.0,
                           "kind": "read-off", "compare": "abs", "tolerance": 0.01, "provenance": "read-off",
                           "source": "s", "basis": "read-off"}]}
    path = tmp_path / "lu2024.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    return path


def test_a_calibrated_read_off_loads_and_says_where_it_was_read(tmp_path):
    detail = load_references(document(tmp_path, ENTRY)).loc[0, "basis_detail"]
    assert "vector-pdf owner/name@0123456:plots/fig.pdf" in detail and "residual 0.002" in detail


def mutated(**changes):
    entry = copy.deepcopy(ENTRY)
    for key, value in changes.items():
        section, _, field = key.partition("__")
        if field:
            if value is None:
                entry[section].pop(field)
            else:
                entry[section][field] = value
        elif value is None:
            entry.pop(section)
        else:
            entry[section] = value
    return entry


@pytest.mark.parametrize("entry, words", [
    (mutated(source=None), ["missing ['source']", "calibrated source"]),
    (mutated(calibration=None), ["missing ['calibration']"]),
    (mutated(source__commit="abc1234"), ["40 hex digits"]),
    (mutated(source__kind="screenshot"), ["`kind` one of vector-pdf, notebook-image, paper-pdf"]),
    (mutated(source__kind="notebook-image"), ["needs repo, commit, path, output", "missing ['output']"]),
    (mutated(calibration__residual=0.05), ["finer than the calibration's residual 0.05"]),
    (mutated(calibration__anchors=""), ["`calibration.anchors`"]),
], ids=["no source", "no calibration", "short commit", "unknown kind", "image without output", "too precise",
        "no anchors"])
def test_a_read_off_without_a_calibrated_source_is_refused(tmp_path, entry, words):
    with pytest.raises(ReferenceFormatError) as err:
        load_references(document(tmp_path, entry))
    for word in words:
        assert word in str(err.value)


def test_a_read_off_row_of_a_figure_without_readoffs_entry_is_refused(tmp_path):
    path = document(tmp_path, ENTRY)
    doc = yaml.safe_load(path.read_text())
    doc["readoffs"] = {}
    doc["references"][0]["basis"] = "claim"  # still read off a figure: its source must be named
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ReferenceFormatError, match="`provenance: read-off` but `readoffs` has no entry"):
        load_references(path)
