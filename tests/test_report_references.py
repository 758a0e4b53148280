"""The reference-file loader (architecture §7): valid files load, every malformed one fails naming file, entry, key."""

from __future__ import annotations

import copy

import pytest
import yaml

from isonorm.report.references import COLUMNS, ReferenceFormatError, load_all_references, load_references, paper_title

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
        (mutate(("references", 0), "lu2024-fig2"), ["reference #0", "mapping"]),
        (mutate(("references",), {"item": "x"}), ["`references`", "list"]),
        (mutate(("title",), ...), ["missing top-level", "title"]),
        (mutate(("paper",), "lu2025"), ["`paper`", "unknown paper slug", "lu2024"]),
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
