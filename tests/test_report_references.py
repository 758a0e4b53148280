"""The reference-file loader (architecture §7): valid files load, every malformed one fails naming file, entry, key."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from isonorm.verdicts.references import (
    COLUMNS,
    PlotSpec,
    ReferenceFormatError,
    load_all_references,
    load_references,
    load_unscored,
    paper_title,
    unscored_reason,
)

# Made-up values: only the format is under test, never what a paper reported.
VALID = {
    "paper": "lu2024",
    "title": "A test paper",
    "references": [
        {"item": "lu2024-fig2", "quantity": "slope", "description": "a slope", "reported": 1.5,
         "kind": "claim", "compare": "abs", "tolerance": 0.25, "provenance": "printed", "source": "test"},
        {"item": "lu2024-table5", "quantity": "ordered", "description": "an ordering holds", "reported": True,
         "kind": "claim", "compare": "true", "provenance": "printed", "source": "test"},
    ],
}


def write(tmp_path, doc, name="lu2024.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return path


def test_valid_file_loads_with_typed_columns(tmp_path):
    frame = load_references(write(tmp_path, VALID))
    assert list(frame.columns) == list(COLUMNS)
    assert frame["plot"].isna().all()  # `plot` is optional
    assert frame["paper"].tolist() == ["lu2024", "lu2024"]
    assert frame["reported"].tolist() == [1.5, 1.0]  # a boolean claim is stored as 1.0
    assert frame["tolerance"].tolist() == [0.25, 0.0]  # a `true` claim needs no tolerance
    assert frame["reported"].dtype == float and frame["tolerance"].dtype == float
    assert paper_title(tmp_path / "lu2024.yaml") == "A test paper"


def test_all_references_concatenates_papers(tmp_path):
    other = copy.deepcopy(VALID)
    other["paper"] = "joudaki2023"
    for entry in other["references"]:
        entry["item"] = entry["item"].replace("lu2024", "joudaki2023")
    frame = load_all_references([write(tmp_path, VALID), write(tmp_path, other, "joudaki2023.yaml")])
    assert frame["paper"].value_counts().to_dict() == {"lu2024": 2, "joudaki2023": 2}
    assert load_all_references([]).empty


def mutate(path: tuple, value):
    """A copy of VALID with the key at ``path`` set to ``value`` (deleted when value is ...)."""
    doc = copy.deepcopy(VALID)
    target = doc
    for key in path[:-1]:
        target = target[key]
    if value is ...:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return doc


@pytest.mark.parametrize(
    "doc, fragments",
    [
        (mutate(("references", 0, "kind"), ...), ["reference #0", "missing", "kind"]),
        (mutate(("references", 1, "kind"), "guess"), ["reference #1", "`kind`", "read-off"]),
        (mutate(("references", 0, "compare"), "approx"), ["reference #0", "`compare`", "abs"]),
        (mutate(("references", 0, "tolerance"), -0.1), ["reference #0", "`tolerance`", ">= 0"]),
        (mutate(("references", 0, "tolerance"), ...), ["reference #0", "missing", "tolerance"]),
        (mutate(("references", 0, "reported"), "about two"), ["reference #0", "`reported`", "number"]),
        (mutate(("references", 0, "reported"), float("nan")), ["reference #0", "`reported`", "finite"]),
        (mutate(("references", 1, "reported"), 0.5), ["reference #1", "compare: true", "reported: true"]),
        (mutate(("references", 0, "item"), "joudaki2023-fig2"), ["reference #0", "`item`", "lu2024-"]),
        (mutate(("references", 0, "item"), "lu2024-Fig2"), ["reference #0", "`item`", "lower-case"]),
        (mutate(("references", 0, "quantity"), ""), ["reference #0", "`quantity`", "non-empty"]),
        (mutate(("references", 0, "unit"), "nats"), ["reference #0", "unknown key", "unit"]),
        (mutate(("references", 0, "plot"), 30), ["reference #0", "`plot`", "mapping"]),
        (mutate(("references", 0, "plot"), None), ["reference #0", "`plot`", "mapping"]),
        (mutate(("references", 0, "plot"), {"x": 30, "colour": "red"}),
         ["reference #0", "`plot`", "unknown", "colour"]),
        (mutate(("references", 0, "plot"), {"series": "relu"}), ["reference #0", "`plot`", "missing `x`"]),
        (mutate(("references", 0, "plot"), {"x": True}), ["reference #0", "`x`", "finite number"]),
        (mutate(("references", 0, "plot"), {"x": float("inf")}), ["reference #0", "`x`", "finite number"]),
        (mutate(("references", 0, "plot"), {"x": " "}), ["reference #0", "`x`", "tick label"]),
        (mutate(("references", 0, "plot"), {"x": 3, "dx": 0.5}), ["reference #0", "`dx`", "tick label"]),
        (mutate(("references", 0, "plot"), {"x": "norm-1", "dx": "half"}), ["reference #0", "`dx`", "number"]),
        (mutate(("references", 0, "plot"), {"x": 3, "panel": -1}), ["reference #0", "`panel`", "index >= 0"]),
        (mutate(("references", 0, "plot"), {"x": 3, "panel": True}), ["reference #0", "`panel`", "title"]),
        (mutate(("references", 0, "plot"), {"x": 3, "series": ""}), ["reference #0", "`series`", "non-empty"]),
        (mutate(("references", 0, "plot"), {"x": 3, "y": "log10"}), ["reference #0", "`y`", "'log10'", "pow10"]),
        (mutate(("references", 1, "plot"), {"x": 3}), ["reference #1", "`plot`", "compare: true"]),
        (mutate(("references", 0), "lu2024-fig2"), ["reference #0", "mapping"]),
        (mutate(("references",), {"item": "x"}), ["`references`", "list"]),
        (mutate(("title",), ...), ["missing top-level", "title"]),
        (mutate(("paper",), "Lu 2024"), ["`paper`", "invalid paper slug", "lu2024"]),
        (mutate(("unscored",), {"lu2024-fig2": {"slope": "the paper gives none"}}),
         ["lu2024-fig2:slope", "has a row", "`unscored`"]),
        (mutate(("unscored",), {"meterez2024-fig1": {"x": "why"}}), ["`unscored`", "does not belong to paper"]),
        (mutate(("unscored",), {"lu2024-fig2": {"other": ""}}), ["`unscored`", "why the paper reports nothing"]),
        ("- just\n- a list\n", ["top level must be a mapping"]),
        ("paper: [unclosed\n", ["not valid YAML"]),
    ],
)
def test_malformed_file_names_file_entry_and_key(tmp_path, doc, fragments):
    path = write(tmp_path, doc)
    with pytest.raises(ReferenceFormatError) as err:
        load_references(path)
    message = str(err.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message


def test_unscored_quantities_say_why_they_have_no_row(tmp_path):
    path = write(tmp_path, mutate(("unscored",), {"lu2024-fig2": {"*_peak": "the paper gives no peak"}}))
    unscored = load_unscored(path)
    assert len(load_references(path)) == 2
    assert unscored_reason(unscored, "lu2024-fig2", "test_acc_peak") == "the paper gives no peak"
    assert unscored_reason(unscored, "lu2024-fig2", "test_acc_peak_d8") is None
    assert unscored_reason(unscored, "lu2024-table5", "test_acc_peak") is None
    assert load_unscored(write(tmp_path, VALID)) == {}


def test_duplicate_item_quantity_is_rejected(tmp_path):
    doc = copy.deepcopy(VALID)
    doc["references"].append(copy.deepcopy(doc["references"][0]))
    with pytest.raises(ReferenceFormatError, match=r"more than once.*lu2024-fig2.*slope"):
        load_references(write(tmp_path, doc))


def test_file_name_must_match_paper(tmp_path):
    with pytest.raises(ReferenceFormatError, match="name it lu2024.yaml"):
        load_references(write(tmp_path, VALID, "meterez2024.yaml"))


def test_missing_file_says_where_it_belongs(tmp_path):
    with pytest.raises(FileNotFoundError, match="notebooks/reference"):
        load_references(tmp_path / "lu2024.yaml")


def test_plot_key_loads_as_a_display_spec(tmp_path):
    doc = copy.deepcopy(VALID)
    doc["references"][0]["plot"] = {"x": 30, "panel": "layer centering", "series": "relu", "y": "pow10"}
    doc["references"][1]["kind"], doc["references"][1]["compare"] = "read-off", "abs"
    doc["references"][1]["tolerance"], doc["references"][1]["reported"] = 0.1, 0.5
    doc["references"][1]["plot"] = {"x": "norm-3", "dx": 0.5, "panel": 1}
    frame = load_references(write(tmp_path, doc))
    first, second = frame["plot"]
    assert first == PlotSpec(x=30.0, panel="layer centering", series="relu", y="pow10")
    assert second == PlotSpec(x="norm-3", dx=0.5, panel=1)
    # The display mapping only: 10**reported for `pow10`, the reported value itself otherwise.
    assert first.y_value(-1.0) == pytest.approx(0.1) and second.y_value(0.5) == 0.5


# The four papers' files: only the structure of each `plot` is checked here, never a reported number.
REFERENCE_FILES = sorted((Path(__file__).parents[1] / "notebooks" / "reference").glob("*.yaml"))


@pytest.mark.parametrize("path", REFERENCE_FILES, ids=lambda p: p.stem)
def test_every_plot_entry_of_the_reference_files_is_well_formed(path):
    frame = load_references(path)
    plotted = frame[frame["plot"].notna()]
    for row in plotted.itertuples():
        spec = row.plot
        assert isinstance(spec, PlotSpec) and spec.x is not None, (row.item, row.quantity)
        assert row.compare in ("abs", "rel"), f"{row.item} {row.quantity}: a bound or a claim is no point"
        # A reported log10 is drawn as 10**value on the figure's log axis, and only a log10 is.
        assert (spec.y == "pow10") == ("log10" in row.quantity), (row.item, row.quantity, spec.y)
    # One panel has one y scale: its entries are all `pow10` or none is.
    scales = plotted.assign(panel=[str(p.panel) for p in plotted["plot"]], y=[str(p.y) for p in plotted["plot"]])
    mixed = scales.groupby(["item", "panel"]).y.nunique()
    assert (mixed == 1).all(), mixed[mixed > 1]


def test_read_off_values_are_drawn_where_the_figures_allow():
    """Most read-off values of the three papers with figures are points of a plotted curve and carry `plot`."""
    for path in REFERENCE_FILES:
        frame = load_references(path)
        read_off = frame[frame["provenance"] == "read-off"]
        if path.stem == "lu2024":
            assert read_off.empty
            continue
        assert read_off["plot"].notna().mean() > 0.5, path.stem
