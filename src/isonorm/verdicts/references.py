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
        source: "paper Fig. 2 caption; daneshmand2021-fig2b"
        plot: {x: 30, series: relu, panel: "layer centering", y: pow10}   # optional, see below
        reading: default     # optional: default (the item's protocol, the default) | alternative | fitted
        basis: read-off      # where the tolerance comes from: digits | read-off | claim | formula (``BASES``)
        check: reproduction  # optional: reproduction (the default) | consistency (``CHECKS``)
        scale: log10         # optional: linear | log10 | ln, the scale the number lives on (``SCALES``)
        contrast: slope_bn   # optional: a quantity of the same item whose difference this row is about
        same_as: "daneshmand2021-fig2a:slope"  # optional: the row of this file that reports the same value
        paper_runs: 1        # optional: the runs the reported value comes from (a table printing one run)
        read: {at: [81.889, 82.010], reduce: mean}   # a read-off row: where it was read (readoff_values)
        note: "..."          # optional; required for alternative and fitted readings: why the reading exists

    unscored:                # optional: quantities the claims measure that the paper reports nothing for
      daneshmand2021-appfig6a:
        vanilla_gap_change: "the change Fig. 6b's rows score; panel a reports the levels"   # why: no row
        "*_peak": "..."      # a shell pattern (fnmatch) names several quantities at once

    readoffs:                # how each read-off figure was read (the basis of its ``read-off`` rows)
      daneshmand2021-fig2b:
        scale: log10         # the scale of the rows' numbers (``SCALES``)
        precision: 0.01      # the half-width the rows' tolerances use: >= the calibration's residual
        source: {kind: notebook-image, repo: hadidaneshmand/batchnorm21, commit: <40 hex>,
                 path: Figures_1_2_6.ipynb, output: "cell 7, output 0"}
        calibration: {anchors: "y ticks 10^-3 and 10^0 at pixel rows 402 and 38", per: "121.3 px per decade",
                      residual: 0.004}
        how: "the curve's pixels at x = 30, mapped through the tick calibration"
        axes: {all: [[-3, 402], [0, 38]]}   # per panel, the ticks as (value, coordinate) pairs
        runs: 20             # optional: the runs the plotted curve averages (its caption)

``source`` is the best file of the figure that exists (docs/decisions/README.md, "Read-offs"): ``kind``
``vector-pdf`` (the authors' vector PDF), ``notebook-image`` (an image stored in the authors' notebook; ``output``
says which) or ``paper-pdf`` (the paper's PDF, ``page`` says where), each in a public repository pinned at a
``commit``; ``calibration`` says which ticks or known anchors fixed the axis (``anchors``), the units per point or
pixel (``per``) and the largest disagreement of that calibration at a tick or anchor (``residual``, in ``scale``
units), which bounds the ``precision`` from below. ``runs`` says how many independent runs the plotted curve
averages, where its caption or code says so: such a curve carries its own seed noise, which the scoreboard adds to
the rows' tolerance (:func:`isonorm.verdicts.scoreboard.reported_noise`); a printed row says the same with
``paper_runs``. ``axes`` calibrates each panel with numbers, and a read-off row's ``read`` records the coordinates its
value was read at and how they reduce to it (:mod:`isonorm.verdicts.readoff_values`); tests/test_reference_readings.py
recomputes every read-off value through them.

A quantity that an item's claims measure and no row lists is scored ``no-reference``, which no verdict counts;
``unscored`` says why such a quantity has no row (the paper reports nothing for it), so that
tests/test_reference_rows.py tells it from a row left out by mistake. A quantity that has a row is never unscored.

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
- ``same_as``: ``<item>:<quantity>`` of the row of the same file that reports the same value (one β printed in
  a table and read again off a figure): the row is shown with its item and scored, but counted once, under the
  row it names (docs/decisions/README.md, "Counting").

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
import re
from fnmatch import fnmatchcase
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import pandas as pd
import yaml

from .comparison import COMPARE_RULES
from .readoff_values import ReadoffError, check_axes, recompute
from .ids import check_item_id, check_slug

# libyaml where it is built in: the reference files hold every read-off's coordinates (hundreds of kB)
FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
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
OPTIONAL_KEYS = ("plot", "reading", "basis", "check", "scale", "contrast", "same_as", "paper_runs", "read", "note")
# Defaults of the optional row keys that the scoreboard always carries.
ROW_DEFAULTS = {"reading": "default", "check": "reproduction", "note": ""}
COLUMNS = ("paper",) + REFERENCE_KEYS + OPTIONAL_KEYS + ("basis_detail", "reported_runs")
READOFF_KEYS = ("scale", "precision", "source", "calibration", "how")
# Where a read-off figure was read (``readoffs: <item>: source``): the authors' vector PDF, an image their notebook
# stores, or the paper's PDF, each at a pinned commit of a public repository; best first.
SOURCE_KINDS = ("vector-pdf", "notebook-image", "paper-pdf")
# Optional: how many independent runs the figure's plotted curve averages (its caption or code; a mean of a few
# runs carries its own seed noise, which the scoreboard adds to the read-off tolerance, "Three outcomes"), and the
# machine-readable calibration of its axes, through which each row's ``read`` is recomputed (isonorm.report.
# readoff_values).
READOFF_OPTIONAL = ("runs", "axes")
SOURCE_KEYS = {"vector-pdf": ("repo", "commit", "path"), "notebook-image": ("repo", "commit", "path", "output"),
               "paper-pdf": ("repo", "commit", "path", "page")}
SOURCE_OPTIONAL = ("page", "output")
CALIBRATION_KEYS = ("anchors", "per", "residual")
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
    if "same_as" in raw and not (isinstance(raw["same_as"], str) and re.fullmatch(r"[^:\s]+:[^:\s]+", raw["same_as"])):
        raise ReferenceFormatError(f"{where}: `same_as` must be '<item>:<quantity>', got {raw['same_as']!r}")
    if "paper_runs" in raw and (isinstance(raw["paper_runs"], bool) or not isinstance(raw["paper_runs"], int)
                                or raw["paper_runs"] < 1):
        raise ReferenceFormatError(f"{where}: `paper_runs` (how many runs the reported value comes from) must be an "
                                   f"integer >= 1, got {raw['paper_runs']!r}")
    if "read" in raw and raw.get("basis") != "read-off":
        raise ReferenceFormatError(f"{where}: `read` records where a read-off was read; this row's basis is "
                                   f"{raw.get('basis')!r}, not read-off")
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


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _source(raw: Any, where: str) -> dict[str, Any]:
    """A read-off figure's ``source``: a kind of file (``SOURCE_KINDS``) at a pinned commit of a repository."""
    if not isinstance(raw, dict) or raw.get("kind") not in SOURCE_KINDS:
        raise ReferenceFormatError(f"{where}: `source` must be a mapping with `kind` one of {', '.join(SOURCE_KINDS)} "
                                   f"(the best file of the figure that exists), got {raw!r}")
    required = SOURCE_KEYS[raw["kind"]]
    allowed = {"kind", *required, *SOURCE_OPTIONAL}
    missing = [k for k in required if k not in raw]
    unknown = sorted(map(str, set(raw) - allowed))
    if missing or unknown:
        raise ReferenceFormatError(f"{where}: a {raw['kind']} `source` needs {', '.join(required)}"
                                   + (f"; missing {missing}" if missing else "") + (f"; unknown {unknown}" if unknown else ""))
    if not re.fullmatch(r"[0-9a-f]{40}", str(raw["commit"])):
        raise ReferenceFormatError(f"{where}: `source.commit` must pin the file: 40 hex digits, got {raw['commit']!r}")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", str(raw["repo"])):
        raise ReferenceFormatError(f"{where}: `source.repo` must be owner/name, got {raw['repo']!r}")
    for key in ("path", "output"):
        if key in raw and not _text(raw[key]):
            raise ReferenceFormatError(f"{where}: `source.{key}` must be a non-empty string, got {raw[key]!r}")
    if "page" in raw and (isinstance(raw["page"], bool) or not isinstance(raw["page"], int) or raw["page"] < 1):
        raise ReferenceFormatError(f"{where}: `source.page` must be a page number >= 1, got {raw['page']!r}")
    return raw


def _calibration(raw: Any, where: str) -> dict[str, Any]:
    """How the axis was fixed: ``anchors`` (ticks or known points), ``per`` (units per point or pixel) and the
    ``residual`` of that calibration, in the figure's scale units."""
    if not isinstance(raw, dict) or sorted(raw) != sorted(CALIBRATION_KEYS):
        raise ReferenceFormatError(f"{where}: `calibration` needs exactly the keys {', '.join(CALIBRATION_KEYS)}, "
                                   f"got {raw!r}")
    for key in ("anchors", "per"):
        if not _text(raw[key]):
            raise ReferenceFormatError(f"{where}: `calibration.{key}` must say it in words, got {raw[key]!r}")
    if _number(raw["residual"], where, "calibration.residual") < 0:
        raise ReferenceFormatError(f"{where}: `calibration.residual` must be >= 0")
    return raw


def _by_item(raw: Any, paper: str, where: str, what: str) -> Iterable[tuple[str, Any]]:
    """(item, entry) of a section keyed by the paper's item ids (``readoffs``, ``unscored``); ``what``: an entry."""
    if not isinstance(raw, dict):
        raise ReferenceFormatError(f"{where} must map item ids to {what}")
    for item, entry in raw.items():
        try:
            check_item_id(item, paper)
        except ValueError as err:
            raise ReferenceFormatError(f"{where}: {err}") from None
        yield item, entry


def _readoffs(raw: Any, paper: str, where: str) -> dict[str, dict[str, Any]]:
    """The ``readoffs`` section: item -> how its figure was read (``READOFF_KEYS``; the module docstring)."""
    for item, entry in _by_item(raw, paper, where, f"{{{', '.join(READOFF_KEYS)}}}"):
        if (not isinstance(entry, dict) or not set(READOFF_KEYS) <= set(entry)
                or not set(entry) <= set(READOFF_KEYS + READOFF_OPTIONAL)):
            missing = sorted(set(READOFF_KEYS) - set(entry)) if isinstance(entry, dict) else list(READOFF_KEYS)
            raise ReferenceFormatError(f"{where}: {item} needs exactly the keys {', '.join(READOFF_KEYS)} (and "
                                       f"optionally {', '.join(READOFF_OPTIONAL)})"
                                       + (f"; missing {missing} (a read-off names its calibrated source)"
                                          if missing else ""))
        runs = entry.get("runs", 1)
        if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
            raise ReferenceFormatError(f"{where}: {item}: `runs` (the runs the plotted curve averages) must be an "
                                       f"integer >= 1, got {runs!r}")
        if entry["scale"] not in SCALES:
            raise ReferenceFormatError(f"{where}: {item}: `scale` {entry['scale']!r}; use one of {', '.join(SCALES)}")
        precision = _number(entry["precision"], f"{where}: {item}", "precision")
        if precision <= 0:
            raise ReferenceFormatError(f"{where}: {item}: `precision` must be > 0")
        if not _text(entry["how"]):
            raise ReferenceFormatError(f"{where}: {item}: `how` must say how the figure was read")
        _source(entry["source"], f"{where}: {item}")
        residual = float(_calibration(entry["calibration"], f"{where}: {item}")["residual"])
        if "axes" in entry:
            try:
                check_axes(entry["axes"], f"{where}: {item}")
            except ReadoffError as err:
                raise ReferenceFormatError(str(err)) from None
        if precision < residual:
            raise ReferenceFormatError(f"{where}: {item}: `precision` {precision:g} is finer than the calibration's "
                                       f"residual {residual:g}; a read-off cannot be more precise than its axis")
    return raw


def _unscored(raw: Any, paper: str, where: str) -> dict[str, dict[str, str]]:
    """The ``unscored`` section: item -> {quantity or shell pattern: why the paper reports nothing for it}."""
    for item, quantities in _by_item(raw, paper, where, "{quantity: why it has no row}"):
        if not isinstance(quantities, dict) or not quantities:
            raise ReferenceFormatError(f"{where}: {item} must map its quantities to why each has no row")
        for quantity, why in quantities.items():
            if not _text(quantity) or not _text(why):
                raise ReferenceFormatError(f"{where}: {item}: {quantity!r} needs a quantity (or a pattern) and, in "
                                           f"words, why the paper reports nothing for it; got {why!r}")
    return raw


def unscored_reason(unscored: dict[str, dict[str, str]], item: str, quantity: str) -> str | None:
    """Why ``quantity`` of ``item`` has no row, as ``unscored`` (:func:`load_unscored`) says; None where it does not."""
    return next((why for pattern, why in unscored.get(item, {}).items() if fnmatchcase(quantity, pattern)), None)


def load_unscored(path: str | Path) -> dict[str, dict[str, str]]:
    """The ``unscored`` section of a reference file ({} without one), checked as :func:`load_references` does."""
    doc = yaml.load(Path(path).read_text(), Loader=FAST_LOADER)
    return _unscored(doc.get("unscored") or {}, check_slug(doc["paper"]), f"{path}: `unscored`")


def describe_source(source: dict[str, Any]) -> str:
    """A read-off's source in one line: ``owner/name@abcdef1:path (page 3)``, with its kind."""
    where = f"{source['repo']}@{str(source['commit'])[:7]}:{source['path']}"
    extra = f", page {source['page']}" if "page" in source else ""
    extra += f", {source['output']}" if "output" in source else ""
    return f"{source['kind']} {where}{extra}"


def _basis_detail(row: dict[str, Any], readoffs: dict[str, dict[str, Any]], where: str) -> str:
    """Where the row's tolerance comes from, in words (the scoreboard's ``basis_detail``)."""
    basis = row.get("basis")
    if basis is None and row.get("provenance") != "read-off":
        return ""
    if basis == "read-off":
        if row["item"] not in readoffs:
            raise ReferenceFormatError(f"{where}: `basis: read-off` but `readoffs` has no entry for {row['item']}; "
                                       "say how its figure was read (scale, precision, how)")
        entry = readoffs[row["item"]]
        calibration = entry["calibration"]
        return (f"read off to ±{entry['precision']:g} ({entry['scale']}) from {describe_source(entry['source'])}; "
                f"calibrated on {calibration['anchors']} ({calibration['per']}, residual "
                f"{float(calibration['residual']):g}): {entry['how']}")
    if row.get("provenance") == "read-off" and row["item"] not in readoffs:
        raise ReferenceFormatError(f"{where}: `provenance: read-off` but `readoffs` has no entry for {row['item']}; "
                                   "name the figure's calibrated source (source, calibration, precision)")
    read_from = (f"; read from {describe_source(readoffs[row['item']]['source'])}"
                 if row.get("provenance") == "read-off" else "")
    if basis is None:
        return read_from.removeprefix("; ")
    return {"digits": "half a unit in the last printed digit",
            "claim": "a relation the paper states; the margin is the reproduced value's seed spread",
            "formula": "a closed form evaluated numerically; the tolerance is the numerical precision"}[basis] + read_from


def _check_same_as(rows: list[dict[str, Any]], path: Path) -> None:
    """Each ``same_as`` names a counted row of the file whose reported value agrees within the two tolerances."""
    by_key = {f"{r['item']}:{r['quantity']}": r for r in rows}
    for row in rows:
        target = row.get("same_as")
        if not isinstance(target, str):
            continue
        where = f"{path}: {row['item']}:{row['quantity']}: `same_as`"
        if target not in by_key:
            raise ReferenceFormatError(f"{where} names {target!r}, which is no row of this file")
        other = by_key[target]
        if isinstance(other.get("same_as"), str):
            raise ReferenceFormatError(f"{where} names {target!r}, which itself repeats {other['same_as']!r}; "
                                       "name the row that is counted")
        if abs(row["reported"] - other["reported"]) > row["tolerance"] + other["tolerance"] + 1e-12:
            raise ReferenceFormatError(f"{where}: reported {row['reported']:g} and {other['reported']:g} differ by "
                                       "more than their tolerances; they are not the same value")


def _reported_runs(row: dict[str, Any], readoffs: dict[str, dict[str, Any]]) -> float:
    """How many runs the reported value comes from, where the paper says (NaN where not): the row's
    ``paper_runs`` (a table that prints one run, a mean over 100 batches), else, for a read-off, the runs its
    figure's curve averages. The scoreboard adds the seed noise of such a value to the tolerance
    (:func:`isonorm.verdicts.scoreboard.reported_noise`)."""
    if "paper_runs" in row:
        return float(row["paper_runs"])
    if row.get("basis") == "read-off" and "runs" in readoffs.get(row["item"], {}):
        return float(readoffs[row["item"]]["runs"])
    return math.nan


def load_references(path: str | Path) -> pd.DataFrame:
    """One reference file as a DataFrame with columns ``COLUMNS``; a ReferenceFormatError names file, entry, key."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"reference file {path} not found; create notebooks/reference/<slug>.yaml (architecture §7)")
    try:
        doc = yaml.load(path.read_text(), Loader=FAST_LOADER)
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
    unknown = sorted(set(doc) - {"paper", "title", "cite", "references", "readoffs", "unscored"})
    if unknown:
        raise ReferenceFormatError(f"{path}: unknown top-level key(s) {unknown}; allowed: paper, title, cite, "
                                   "references, readoffs, unscored")
    readoffs = _readoffs(doc.get("readoffs") or {}, paper, f"{path}: `readoffs`")
    unscored = _unscored(doc.get("unscored") or {}, paper, f"{path}: `unscored`")
    rows = [_entry(raw, paper, f"{path}, reference #{i}") for i, raw in enumerate(doc["references"])]
    for i, row in enumerate(rows):
        if unscored_reason(unscored, row["item"], row["quantity"]) is not None:
            raise ReferenceFormatError(f"{path}, reference #{i}: {row['item']}:{row['quantity']} has a row and is "
                                       "listed under `unscored` (no row) too; keep one")
    for i, row in enumerate(rows):
        where = f"{path}, reference #{i}"
        row["basis_detail"] = _basis_detail(row, readoffs, where)
        row["reported_runs"] = _reported_runs(row, readoffs)
        if "read" in row:
            axes = readoffs[row["item"]].get("axes")
            if axes is None:
                raise ReferenceFormatError(f"{where}: `read` needs its figure's `axes` in `readoffs: {row['item']}`")
            try:
                recompute(row["read"], axes, where)
            except ReadoffError as err:
                raise ReferenceFormatError(str(err)) from None
    _check_same_as(rows, path)
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    duplicated = frame[frame.duplicated(["item", "quantity"], keep=False)]
    if not duplicated.empty:
        pairs = sorted(set(zip(duplicated["item"], duplicated["quantity"])))
        raise ReferenceFormatError(f"{path}: (item, quantity) listed more than once: {pairs}; keep one entry each")
    return frame.astype({"reported": float, "tolerance": float, "reported_runs": float})


def load_all_references(paths: Iterable[str | Path]) -> pd.DataFrame:
    frames = [load_references(p) for p in paths]
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS)).astype({"reported": float, "tolerance": float,
                                                           "reported_runs": float})
    return pd.concat(frames, ignore_index=True)


def paper_title(path: str | Path) -> str:
    """The paper as the report's index page names it: ``cite: title`` of its reference file (``Lu et al. (IJCAI
    2024): The Orthogonality of …``), or the title alone where the file has no ``cite``."""
    doc = yaml.load(Path(path).read_text(), Loader=FAST_LOADER)
    return f"{doc['cite']}: {doc['title']}" if doc.get("cite") else str(doc["title"])
