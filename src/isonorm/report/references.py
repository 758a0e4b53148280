"""Load ``notebooks/reference/<slug>.yaml``: what each paper reported, per item (architecture §7, **contract**).

Format::

    paper: daneshmand2021
    title: "..."
    references:
      - item: daneshmand2021-fig2b
        quantity: slope_caption
        description: slope of ln(avg V) vs ln d, caption version
        reported: -0.5
        kind: claim          # exact | read-off | claim
        compare: abs         # abs | rel | le | ge | true   (see ``comparison.COMPARE_RULES``)
        tolerance: 0.1
        provenance: printed  # printed | read-off | derived: where the number comes from
        source: "paper Fig. 2 caption; B-Fig2b"

Reported values are only ever compared with, never fed into a computation (docs/decisions/README.md).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

import pandas as pd
import yaml

from .comparison import COMPARE_RULES
from .ids import check_item_id, check_slug

KINDS = ("exact", "read-off", "claim")
# Where a reported number comes from: printed in the paper (text, table, caption, legend), read off a figure (the
# paper's or the authors' rendered notebooks'), or derived from the authors' code or data. The scoreboard reports
# match rates per provenance: a printed number weighs differently from a read-off.
PROVENANCES = ("printed", "read-off", "derived")
REFERENCE_KEYS = ("item", "quantity", "description", "reported", "kind", "compare", "tolerance", "provenance",
                  "source")
COLUMNS = ("paper",) + REFERENCE_KEYS


class ReferenceFormatError(ValueError):
    """A reference file that does not follow the format above."""


def _number(value: Any, where: str, key: str) -> float:
    # Booleans are accepted for `reported` of a `true` claim; YAML reads `true` as bool.
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    raise ReferenceFormatError(f"{where}: `{key}` must be a finite number, got {value!r}")


def _entry(raw: Any, paper: str, where: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise ReferenceFormatError(f"{where}: each reference must be a mapping with keys {', '.join(REFERENCE_KEYS)}")
    unknown = sorted(set(raw) - set(REFERENCE_KEYS))
    if unknown:
        raise ReferenceFormatError(f"{where}: unknown key(s) {unknown}; allowed: {', '.join(REFERENCE_KEYS)}")
    required = [k for k in REFERENCE_KEYS if k != "tolerance" or raw.get("compare") != "true"]
    missing = [k for k in required if k not in raw]
    if missing:
        raise ReferenceFormatError(f"{where}: missing key(s) {missing}")
    try:
        check_item_id(raw["item"], paper)
    except ValueError as err:
        raise ReferenceFormatError(f"{where}: `item`: {err}") from None
    for key in ("quantity", "description", "source"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise ReferenceFormatError(f"{where}: `{key}` must be a non-empty string, got {raw[key]!r}")
    if raw["kind"] not in KINDS:
        raise ReferenceFormatError(f"{where}: `kind` is {raw['kind']!r}; use one of {', '.join(KINDS)}")
    if raw["provenance"] not in PROVENANCES:
        raise ReferenceFormatError(
            f"{where}: `provenance` is {raw['provenance']!r}; use one of {', '.join(PROVENANCES)}")
    if raw["compare"] not in COMPARE_RULES:
        raise ReferenceFormatError(f"{where}: `compare` is {raw['compare']!r}; use one of {', '.join(COMPARE_RULES)}")
    reported = _number(raw["reported"], where, "reported")
    # A `true` claim ("x == 1") has no tolerance; the others need a non-negative one.
    tolerance = _number(raw.get("tolerance", 0.0), where, "tolerance")
    if tolerance < 0:
        raise ReferenceFormatError(f"{where}: `tolerance` must be >= 0, got {tolerance}")
    if raw["compare"] == "true" and reported != 1.0:
        raise ReferenceFormatError(f"{where}: a `compare: true` claim must have `reported: true` (or 1)")
    return {**raw, "paper": paper, "reported": reported, "tolerance": tolerance}


def load_references(path: str | Path) -> pd.DataFrame:
    """One reference file as a DataFrame with columns ``COLUMNS``; a ReferenceFormatError names file, entry, key."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"reference file {path} not found; create notebooks/reference/<slug>.yaml (architecture §7)")
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        raise ReferenceFormatError(f"{path}: not valid YAML: {err}") from None
    if not isinstance(doc, dict):
        raise ReferenceFormatError(f"{path}: top level must be a mapping with keys paper, title, references")
    missing = [k for k in ("paper", "title", "references") if k not in doc]
    if missing:
        raise ReferenceFormatError(f"{path}: missing top-level key(s) {missing}")
    try:
        paper = check_slug(doc["paper"])
    except ValueError as err:
        raise ReferenceFormatError(f"{path}: `paper`: {err}") from None
    if path.stem != paper:
        raise ReferenceFormatError(
            f"{path}: `paper` is {paper!r} but the file is named {path.name}; name it {paper}.yaml"
        )
    if not isinstance(doc["references"], list):
        raise ReferenceFormatError(f"{path}: `references` must be a list of entries")
    rows = [_entry(raw, paper, f"{path}, reference #{i}") for i, raw in enumerate(doc["references"])]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    duplicated = frame[frame.duplicated(["item", "quantity"], keep=False)]
    if not duplicated.empty:
        pairs = sorted(set(zip(duplicated["item"], duplicated["quantity"])))
        raise ReferenceFormatError(f"{path}: (item, quantity) listed more than once: {pairs}; keep one entry each")
    return frame.astype({"reported": float, "tolerance": float})


def load_all_references(paths: Iterable[str | Path]) -> pd.DataFrame:
    frames = [load_references(p) for p in paths]
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS)).astype({"reported": float, "tolerance": float})
    return pd.concat(frames, ignore_index=True)


def paper_title(path: str | Path) -> str:
    """The ``title`` of a reference file, for the report's index page."""
    return str(yaml.safe_load(Path(path).read_text())["title"])
