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
        plot: {x: 30, series: relu, panel: "layer centering", y: pow10}   # optional, see below
        reading: default     # optional: default (the item's protocol, the default) | alternative | fitted
        basis: read-off      # where the tolerance comes from: digits | read-off | claim | formula (``BASES``)
        check: reproduction  # optional: reproduction (the default) | consistency (``CHECKS``)
        scale: log10         # optional: linear | log10 | ln, the scale the number lives on (``SCALES``)
        contrast: slope_bn   # optional: a quantity of the same item whose difference this row is about
        note: "..."          # optional; required for alternative and fitted readings: why the reading exists

    readoffs:                # how each read-off figure was read (the basis of its ``read-off`` rows)
      daneshmand2021-fig2b: {scale: log10, precision: 0.05, how: "log y-axis 10^-3..10^0, read at gridlines"}

What the row-level keys mean (docs/decisions/README.md, "Verdicts"):

- ``reading``: ``default`` is the item's protocol as the spec fixes it; only default rows count in the headline,
  one per distinct reported value. ``alternative`` reads the same reported value another way (another constant,
  more runs, an offset), shown beside its default and counted apart. ``fitted`` uses a setting chosen to agree
  with the paper (a width picked from a sweep): it shows how far a setting must move, and is never a match.
- ``basis``: ``digits``, half a unit in the last printed digit; ``read-off``, the precision of reading the
  item's figure (its ``readoffs`` entry: scale, precision, how it was read); ``claim``, a relation the paper
  states (the margin is the reproduced value's own seed spread); ``formula``, a closed form evaluated
  numerically (the tolerance is the numerical precision).
- ``check``: ``consistency`` for a row that no change to a model can move (it depends on the input alone or
  restates a closed form against itself): shown, counted apart from the reproduction.
- ``scale`` (inferred from a ``log10``, ``ln`` or ``log`` part of the quantity's name when absent): decides when a tolerance is weak.
- ``contrast``: the quantity whose reproduced difference from this one is what the item is about (with vs
  without normalisation, two widths); a tolerance wider than that difference is weak.

``plot`` (optional) says where the reported value sits on the item's figure, so that the report draws it as a
"paper" marker beside this run's curves (``notebook.ItemRenderer.figure``, architecture §7). Its keys:

- ``x`` (required): the x-coordinate in the figure's data units (layer 30, depth 1000, epoch 9), or a string:
  the label of a tick of the panel's x axis (``norm-3`` on an axis of module names); ``dx`` (optional, only with
  a tick label) shifts the point from that tick, in data units (a figure whose tick labels sit beside their
  points);
- ``panel`` (optional): which axes of the figure: its title (exact, or the one title that starts with it
  followed by a non-alphanumeric character: ``Sigmoid`` for ``Sigmoid, β_σ = 1.012``) or an integer index into
  ``fig.axes``; default the figure's first axes;
- ``series`` (optional): the label of the line or hue the point belongs to, as the notebook's legend shows it
  (matched like a title); the marker takes that line's colour; default black (a value of no single curve);
- ``y`` (optional): how the reported number maps to the plotted y: omitted, the number itself; ``pow10``,
  10**number (a reported log10 on a figure that plots the quantity on a log axis). See ``Y_TRANSFORMS``.

Reported values are only ever compared with, never fed into a computation, a plot-producing step of the pipeline
or a test expectation (docs/decisions/README.md); drawing a reference as a "paper" marker in the report is
their one display use, and ``y`` is a pure display mapping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd
import yaml

from .comparison import COMPARE_RULES
from .ids import check_item_id, check_slug

KINDS = ("exact", "read-off", "claim")
READINGS = ("default", "alternative", "fitted")
BASES = ("digits", "read-off", "claim", "formula")
CHECKS = ("reproduction", "consistency")
SCALES = ("linear", "log10", "ln")
# Where a reported number comes from: printed in the paper (text, table, caption, legend), read off a figure (the
# paper's or the authors' rendered notebooks'), or derived from the authors' code or data. The scoreboard reports
# match rates per provenance: a printed number weighs differently from a read-off.
PROVENANCES = ("printed", "read-off", "derived")
REFERENCE_KEYS = ("item", "quantity", "description", "reported", "kind", "compare", "tolerance", "provenance",
                  "source")
OPTIONAL_KEYS = ("plot", "reading", "basis", "check", "scale", "contrast", "note")
# Defaults of the optional row keys that the scoreboard always carries.
ROW_DEFAULTS = {"reading": "default", "check": "reproduction", "note": ""}
COLUMNS = ("paper",) + REFERENCE_KEYS + OPTIONAL_KEYS + ("basis_detail",)
READOFF_KEYS = ("scale", "precision", "how")
PLOT_KEYS = ("x", "dx", "panel", "series", "y")
# How a reported number maps to the plotted y-value (``plot: {y: ...}``); omitted = the number itself. Display
# only: the mapped value is drawn as a "paper" marker and never computed with.
Y_TRANSFORMS = {"pow10": lambda value: 10.0 ** value}


class ReferenceFormatError(ValueError):
    """A reference file that does not follow the format above."""


@dataclass(frozen=True)
class PlotSpec:
    """Where a reference sits on its item's figure (the ``plot`` key, see the module docstring)."""

    x: float | str
    dx: float = 0.0
    panel: str | int | None = None
    series: str | None = None
    y: str | None = None

    def y_value(self, reported: float) -> float:
        """The plotted y of the reported number (display only)."""
        return float(reported) if self.y is None else float(Y_TRANSFORMS[self.y](float(reported)))

    def describe(self) -> str:
        parts = [f"x={self.x!r}" + (f"{self.dx:+g}" if self.dx else "")]
        parts += [f"{key}={getattr(self, key)!r}" for key in ("panel", "series", "y") if getattr(self, key) is not None]
        return ", ".join(parts)


def _plot(raw: Any, where: str) -> PlotSpec:
    where = f"{where}: `plot`"
    if not isinstance(raw, dict):
        raise ReferenceFormatError(f"{where} must be a mapping with keys {', '.join(PLOT_KEYS)}, got {raw!r}")
    unknown = sorted(map(str, set(raw) - set(PLOT_KEYS)))
    if unknown:
        raise ReferenceFormatError(f"{where}: unknown key(s) {unknown}; allowed: {', '.join(PLOT_KEYS)}")
    if "x" not in raw:
        raise ReferenceFormatError(f"{where}: missing `x` (the x-coordinate in data units, or a tick label)")
    x = raw["x"]
    if isinstance(x, str):
        if not x.strip():
            raise ReferenceFormatError(f"{where}: `x` must be a number or a non-empty tick label, got {x!r}")
    elif isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        raise ReferenceFormatError(f"{where}: `x` must be a finite number or a tick label, got {x!r}")
    else:
        x = float(x)
    dx = raw.get("dx", 0.0)
    if isinstance(dx, bool) or not isinstance(dx, (int, float)) or not math.isfinite(dx):
        raise ReferenceFormatError(f"{where}: `dx` must be a finite number, got {dx!r}")
    if dx and not isinstance(x, str):
        raise ReferenceFormatError(f"{where}: `dx` shifts a tick label; with a numeric `x` write the x itself")
    panel = raw.get("panel")
    if panel is not None and not (
        (isinstance(panel, str) and panel.strip()) or (isinstance(panel, int) and not isinstance(panel, bool)
                                                        and panel >= 0)
    ):
        raise ReferenceFormatError(
            f"{where}: `panel` must be an axes title or an index >= 0 into the figure's axes, got {panel!r}")
    series = raw.get("series")
    if series is not None and not (isinstance(series, str) and series.strip()):
        raise ReferenceFormatError(f"{where}: `series` must be a non-empty legend label, got {series!r}")
    y = raw.get("y")
    if y is not None and y not in Y_TRANSFORMS:
        raise ReferenceFormatError(
            f"{where}: `y` is {y!r}; omit it (the reported value itself) or use one of {', '.join(Y_TRANSFORMS)}")
    return PlotSpec(x=x, dx=float(dx), panel=panel, series=series, y=y)


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
    unknown = sorted(set(raw) - set(REFERENCE_KEYS) - set(OPTIONAL_KEYS))
    if unknown:
        raise ReferenceFormatError(
            f"{where}: unknown key(s) {unknown}; allowed: {', '.join(REFERENCE_KEYS + OPTIONAL_KEYS)}")
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
    for key, allowed in (("reading", READINGS), ("basis", BASES), ("check", CHECKS), ("scale", SCALES)):
        if key in raw and raw[key] not in allowed:
            raise ReferenceFormatError(f"{where}: `{key}` is {raw[key]!r}; use one of {', '.join(allowed)}")
    for key in ("contrast", "note"):
        if key in raw and not (isinstance(raw[key], str) and raw[key].strip()):
            raise ReferenceFormatError(f"{where}: `{key}` must be a non-empty string, got {raw[key]!r}")
    if raw.get("reading", "default") != "default" and not raw.get("note"):
        raise ReferenceFormatError(f"{where}: an {raw['reading']} reading needs a `note`: why it exists")
    plot = None
    if "plot" in raw:
        if raw["compare"] == "true":
            raise ReferenceFormatError(f"{where}: `plot` on a `compare: true` claim; a true/false claim is no point")
        plot = _plot(raw["plot"], where)
    return {**ROW_DEFAULTS, **raw, "paper": paper, "reported": reported, "tolerance": tolerance, "plot": plot,
            "scale": raw.get("scale") or scale_of(raw["quantity"])}


def scale_of(quantity: str) -> str:
    """The scale a quantity's number lives on, from its name when the row does not say: a ``log10`` part of the
    name (``log10_gap_l30``, ``grad_first_log10_d100``) means log10, an ``ln`` or ``log`` part natural log."""
    parts = quantity.split("_")
    if "log10" in parts:
        return "log10"
    if "ln" in parts or "log" in parts:
        return "ln"
    return "linear"


def _readoffs(raw: Any, paper: str, where: str) -> dict[str, dict[str, Any]]:
    """The ``readoffs`` section: item -> how its figure was read (scale, precision, how)."""
    if not isinstance(raw, dict):
        raise ReferenceFormatError(f"{where} must map item ids to {{{', '.join(READOFF_KEYS)}}}")
    for item, entry in raw.items():
        try:
            check_item_id(item, paper)
        except ValueError as err:
            raise ReferenceFormatError(f"{where}: {err}") from None
        if not isinstance(entry, dict) or sorted(entry) != sorted(READOFF_KEYS):
            raise ReferenceFormatError(f"{where}: {item} needs exactly the keys {', '.join(READOFF_KEYS)}")
        if entry["scale"] not in SCALES:
            raise ReferenceFormatError(f"{where}: {item}: `scale` {entry['scale']!r}; use one of {', '.join(SCALES)}")
        if _number(entry["precision"], f"{where}: {item}", "precision") <= 0:
            raise ReferenceFormatError(f"{where}: {item}: `precision` must be > 0")
        if not isinstance(entry["how"], str) or not entry["how"].strip():
            raise ReferenceFormatError(f"{where}: {item}: `how` must say how the figure was read")
    return raw


def _basis_detail(row: dict[str, Any], readoffs: dict[str, dict[str, Any]], where: str) -> str:
    """Where the row's tolerance comes from, in words (the scoreboard's ``basis_detail``)."""
    basis = row.get("basis")
    if basis is None:
        return ""
    if basis == "read-off":
        if row["item"] not in readoffs:
            raise ReferenceFormatError(f"{where}: `basis: read-off` but `readoffs` has no entry for {row['item']}; "
                                       "say how its figure was read (scale, precision, how)")
        entry = readoffs[row["item"]]
        return f"read off to ±{entry['precision']:g} ({entry['scale']}): {entry['how']}"
    return {"digits": "half a unit in the last printed digit",
            "claim": "a relation the paper states; the margin is the reproduced value's seed spread",
            "formula": "a closed form evaluated numerically; the tolerance is the numerical precision"}[basis]


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
    unknown = sorted(set(doc) - {"paper", "title", "cite", "references", "readoffs"})
    if unknown:
        raise ReferenceFormatError(f"{path}: unknown top-level key(s) {unknown}; allowed: paper, title, cite, "
                                   "references, readoffs")
    readoffs = _readoffs(doc.get("readoffs") or {}, paper, f"{path}: `readoffs`")
    rows = [_entry(raw, paper, f"{path}, reference #{i}") for i, raw in enumerate(doc["references"])]
    for i, row in enumerate(rows):
        row["basis_detail"] = _basis_detail(row, readoffs, f"{path}, reference #{i}")
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
    """The paper as the report's index page names it: ``cite: title`` of its reference file (``Lu et al. (IJCAI
    2024): The Orthogonality of …``), or the title alone where the file has no ``cite``."""
    doc = yaml.safe_load(Path(path).read_text())
    return f"{doc['cite']}: {doc['title']}" if doc.get("cite") else str(doc["title"])
