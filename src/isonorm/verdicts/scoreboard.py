"""The scoreboard: every reported number next to the reproduced one, with a verdict (architecture §7, **contract**).

``results/scoreboard.csv`` has exactly the columns ``SCOREBOARD_COLUMNS`` and reads on its own: ``compare`` names
the rule (``comparison.COMPARE_RULES``) under which ``reported``, ``tolerance`` and the reproduced value's
``spread`` are read; ``basis``/``basis_detail`` say where the tolerance comes from; ``reading`` and ``check`` say
whether the row counts in the headline; ``weak`` marks a tolerance too wide to tell much; ``note`` says why a
reading exists, or why a row failed, is undecided or did not run; ``same_as`` names the row a repeated reported
value is counted under (docs/decisions/README.md, "Verdicts"). A reference whose item
produced no claim at all is ``not-run``; one whose item ran but whose value is missing, NaN or infinite is
``failed``; a reproduced quantity that no reference lists is ``no-reference``. ``origin`` says where a row's
number came from (:func:`row_origins`, :func:`origin_kind`): computed here or imported from a bundle, with device,
date and commit; ``failed (log: …)`` for a row whose job failed; ``not run`` for a row nothing measured.

Each paper is scored once, by its claims job: ``results/<slug>/scored.csv`` (:func:`score_files`, columns
``SCORED_COLUMNS``) holds its rows, which its page shows under each item and :func:`scoreboard_of` puts together
into the scoreboard.
"""

from __future__ import annotations

import re

import math
from pathlib import Path
from typing import Any, Iterable, Mapping

import pandas as pd

from .claims import CLAIM_COLUMNS, as_text, read_claims
from .comparison import (ALTERNATIVE, COMPUTED, CONSISTENCY, FAILED, FITTED, FITTED_READING, HEADLINE_VERDICTS,
                         INCONCLUSIVE, MATCH, MISMATCH, NOT_PRODUCED, NOT_RUN, SCORED, SMOKE_VERDICTS,
                         counts_in_headline, judge, judge_smoke, marked_weak, weak, within)
from ..outputs import PAPER_PRESET
from ..atomic import write_text_atomically
from .ids import paper_of
from .references import PROVENANCES, load_all_references

SCOREBOARD_COLUMNS = ("paper", "item", "quantity", "reported", "reproduced", "spread", "compare", "tolerance",
                      "basis", "basis_detail", "reading", "check", "same_as", "weak", "verdict", "within", "provenance",
                      "note", "preset", "origin")
# A paper's scored rows (``scored.csv``): the scoreboard's columns, and for its page's tables what each quantity is
# and where its reported value comes from.
SCORED_COLUMNS = (*SCOREBOARD_COLUMNS, "description", "source")
# The scored rows' numbers; every other column but ``weak`` is text (a quantity named "1e3" stays a name).
NUMBER_COLUMNS = ("reported", "reproduced", "spread", "tolerance")
# The note of a row measured at the end of a run in which another job of its item did not finish (unfinished_rows).
PART_MEASURED = "measured from the part of this item's results that exists: a job it needs did not finish in this run"

# Where a row's number came from, the ``origin`` column (:func:`row_origins`). A measured row (any verdict but
# not-run, not-produced and a failed job's) holds its item's origin text as isonorm.bundles.ledger.item_origins gives
# it: "computed (cpu:x86_64, 2026-12-01, b5ab422)", "imported from <bundle> (…)", "stale, imported from <bundle> (…)",
# several parts joined with "; " (imported parts first); ``computed`` where the item has none (unit tests,
# notebook-only items). A row nothing measured is ``not run``; a row whose job failed ``failed (log: <path>)``.
# Its kind, one of ORIGIN_KINDS, is :func:`origin_kind`'s.
ORIGIN_COMPUTED, ORIGIN_IMPORTED, ORIGIN_STALE, ORIGIN_FAILED, ORIGIN_NOT_RUN, ORIGIN_UNKNOWN = (
    "computed", "imported", "stale", "failed", "not run", "unknown")
ORIGIN_KINDS = (ORIGIN_COMPUTED, ORIGIN_IMPORTED, ORIGIN_STALE, ORIGIN_FAILED, ORIGIN_NOT_RUN, ORIGIN_UNKNOWN)
# The origin of each row of a scored file written before the column existed (:func:`read_scored`).
UNKNOWN_ORIGIN = "origin unknown (scored before the scored rows said where their numbers came from)"
ORIGIN_SEPARATOR = "; "
_BUNDLE = re.compile(r"imported from (\S+) \(")


def origin_kind(text: object) -> str:
    """The kind (``ORIGIN_KINDS``) of an origin text. A text of several parts (files of one item with different
    origins): ``stale`` when any part is, else ``imported`` when any part is (a number made in part from another
    checkout's files is not this checkout's own), else the first part's kind; ``unknown`` for an empty text or any
    other (:data:`UNKNOWN_ORIGIN`)."""
    parts = [p.strip() for p in str(text).split(ORIGIN_SEPARATOR)] if isinstance(text, str) else []
    parts = [p for p in parts if p]
    if not parts:
        return ORIGIN_UNKNOWN
    if any(p.startswith("stale") for p in parts):
        return ORIGIN_STALE
    if any(p.startswith("imported") for p in parts):
        return ORIGIN_IMPORTED
    for kind in (ORIGIN_COMPUTED, ORIGIN_FAILED, ORIGIN_NOT_RUN):
        if parts[0] == kind or parts[0].startswith(f"{kind} "):
            return kind
    return ORIGIN_UNKNOWN


def origin_bundles(text: object) -> list[str]:
    """The bundles an origin text names (its ``imported from <bundle>`` parts, stale ones too), in order."""
    return list(dict.fromkeys(_BUNDLE.findall(text))) if isinstance(text, str) else []


def failed_origin(log_path: object) -> str:
    """The origin of a row whose job failed: ``failed (log: <path>)``, ``failed`` without a log."""
    return f"{ORIGIN_FAILED} (log: {log_path})" if isinstance(log_path, str) and log_path else ORIGIN_FAILED


def read_all_claims(paths: Iterable[str | Path]) -> pd.DataFrame:
    """All existing claims files concatenated; a missing file contributes nothing (its items are not-run)."""
    frames = [read_claims(p) for p in paths if Path(p).is_file()]
    if not frames:
        return pd.DataFrame(columns=list(CLAIM_COLUMNS)).astype({"value": float, "spread": float, "runs": float})
    return pd.concat(frames, ignore_index=True)


def _joined(references: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """References left-joined with claims (reference order), then claims no reference lists; ``claimed`` says
    whether the claims hold the row's quantity."""
    keys = ["item", "quantity"]
    claims = claims.rename(columns={"value": "reproduced", "note": "claim_note"}).assign(claimed=True)
    referenced = references.merge(claims, on=keys, how="left")  # keeps the reference files' order
    unreferenced = claims.merge(references[keys], on=keys, how="left", indicator=True)
    unreferenced = unreferenced[unreferenced["_merge"] == "left_only"].drop(columns="_merge")
    merged = pd.concat([referenced, unreferenced], ignore_index=True)
    merged["claimed"] = merged["claimed"].eq(True)
    return merged


def _contrast_values(merged: pd.DataFrame) -> list[float | None]:
    """The reproduced value of each row's ``contrast`` quantity (same item), None without one."""
    values = {(r.item, r.quantity): r.reproduced for r in merged.itertuples()}
    contrasts = merged["contrast"] if "contrast" in merged else pd.Series(None, index=merged.index)
    return [None if not isinstance(c, str) else values.get((item, c))
            for item, c in zip(merged["item"], contrasts)]


def reported_noise(spread: float, runs: float, reported_runs: float) -> float:
    """The seed noise of a reported value that is one run, or a mean of ``reported_runs`` runs (a table printing one
    run, a figure plotting a mean of ten), as the 95 % half-width of such a value: this run's ``spread`` over its
    ``runs`` runs, scaled to the paper's count (a spread falls as 1/√runs); NaN when any is unknown ("Three
    outcomes": the reported value's own noise)."""
    if not all(isinstance(v, (int, float)) and math.isfinite(v) and v > 0 for v in (spread, runs, reported_runs)):
        return math.nan
    return float(spread) * math.sqrt(float(runs) / float(reported_runs))


def _borrowed_spreads(merged: pd.DataFrame) -> pd.DataFrame:
    """A single stochastic run has no spread of its own; it takes the widest one its item's other runs show: the
    largest relative one-run half-width (spread · √runs / |value|) over the item's two-sided rows of the same
    scale measured over several runs, times its own |value| ("Three outcomes": a single run). Rows without such a
    sibling keep no spread, and stay inconclusive."""
    merged = merged.copy()
    merged["borrowed"] = False
    scale = merged["scale"].fillna("linear") if "scale" in merged else pd.Series("linear", index=merged.index)
    runs = pd.to_numeric(merged["runs"], errors="coerce")
    spread = pd.to_numeric(merged["spread"], errors="coerce")
    value = pd.to_numeric(merged["reproduced"], errors="coerce")
    two_sided = merged["compare"].isin(["abs", "rel"])
    donors = two_sided & (runs >= 2) & spread.gt(0) & value.ne(0) & value.notna()
    relative = (spread * runs.pow(0.5) / value.abs()).where(donors)
    single = two_sided & merged["claimed"] & (runs == 1) & spread.isna() & value.notna()
    for index in merged.index[single]:
        siblings = relative[(merged["item"] == merged.at[index, "item"]) & (scale == scale[index])].dropna()
        if len(siblings):
            merged.at[index, "spread"] = float(siblings.max()) * abs(float(value[index]))
            merged.at[index, "borrowed"] = True
    return merged


def _with_reported_noise(merged: pd.DataFrame) -> pd.DataFrame:
    """Rows whose reported value is one run or a mean of a few (``reported_runs``): their tolerance is the
    precision of the number plus its own seed noise (:func:`reported_noise`), and ``basis_detail`` says so; the
    precision alone stays in ``precision`` (the headline tells matches at it from matches within the noise)."""
    merged = merged.assign(precision=merged["tolerance"])
    if "reported_runs" not in merged:
        return merged
    for index, row in merged.iterrows():
        noise = reported_noise(row.get("spread"), row.get("runs"), row.get("reported_runs"))
        if math.isnan(noise) or row.get("compare") not in ("abs", "rel") or not row.get("claimed"):
            continue
        reported = float(row["reported"])
        if row["compare"] == "rel" and reported == 0:
            continue
        merged.at[index, "tolerance"] = float(row["tolerance"]) + (
            noise if row["compare"] == "abs" else noise / abs(reported))
        count, figure = int(row["reported_runs"]), row.get("basis") == "read-off"
        if figure:
            what = "the figure plots one run" if count == 1 else f"the figure is a mean of {count} runs"
        else:
            what = "the reported value is one run" if count == 1 else f"the reported value is a mean of {count} runs"
        merged.at[index, "basis_detail"] = "; ".join(filter(None, (
            str(row["basis_detail"]) if isinstance(row["basis_detail"], str) else "",
            f"{what}: its own seed noise ±{noise:.2g} (this run's spread scaled to that count) is added to the "
            f"{'read-off ' if figure else ''}precision {float(row['tolerance']):g}")))
    return merged


PRECISION, SEED_NOISE = "precision", "seed-noise"  # the ``within`` of a match


def _within(merged: pd.DataFrame) -> list[str]:
    """Per match, what decided it: ``precision`` when it holds at the reference's own precision (with this run's
    spread), ``seed-noise`` when only the reported value's own seed noise brings it within; "" for other rows."""
    return ["" if r.verdict != MATCH else PRECISION if r.compare == "true" or within(
                r.reproduced, r.reported, r.compare, r.precision, r.spread) else SEED_NOISE
            for r in merged.itertuples()]


def row_origins(items: Iterable[str], verdicts: Iterable[str], origins: Mapping[str, str] | None) -> list[str]:
    """Each row's ``origin``: ``not run`` for a row nothing measured (not-run, a smoke run's not-produced), else its
    item's text in ``origins`` ({item id: origin text}, isonorm.bundles.ledger.item_origins), ``computed`` where the
    item has none. A row failed for a NaN or missing value keeps its item's origin: the number came from those files.
    A failed job's rows get theirs from :func:`unfinished_rows`."""
    origins = origins or {}
    return [ORIGIN_NOT_RUN if verdict in (NOT_RUN, NOT_PRODUCED) else origins.get(item) or ORIGIN_COMPUTED
            for item, verdict in zip(items, verdicts)]


def score(references: pd.DataFrame, claims: pd.DataFrame, smoke: bool = False,
          origins: Mapping[str, str] | None = None) -> pd.DataFrame:
    """References joined with claims on (item, quantity), with a ``verdict``, a ``weak`` mark and an ``origin``
    (:func:`row_origins`, from ``origins``: {item id: origin text}) per row.

    Keeps the reference columns (``compare``, ``kind``, ``provenance``, ``description``, ``source``, ``reading``,
    ``basis``...) and the claim's ``note`` so that the per-item tables in the paper pages can show them. Rows
    follow the reference files' order; claims no reference lists come last. An item "ran" when the claims hold at
    least one row for it (docs/decisions/README.md, "Verdicts"). ``smoke``: a run at reduced sizes or data, whose
    rows are not compared to the paper (:func:`judge_smoke`) and are never weak.
    """
    merged = _with_reported_noise(_borrowed_spreads(_joined(references, claims)))
    merged["paper"] = merged["item"].map(paper_of)
    ran = set(claims["item"])
    reading = merged["reading"] if "reading" in merged else pd.Series(None, index=merged.index)
    if smoke:
        judgements = [judge_smoke(r.reproduced if r.claimed else None, ran=r.item in ran)
                      for r in merged.itertuples()]
    else:
        judgements = [
            judge(r.reproduced if r.claimed else None, r.reported, r.compare, r.tolerance, r.spread, reading=rd,
                  ran=r.item in ran, runs=r.runs)
            for r, rd in zip(merged.itertuples(), reading)
        ]
    merged["verdict"] = [j.verdict for j in judgements]
    merged["within"] = [""] * len(merged) if smoke else _within(merged)
    merged["weak"] = [
        False if smoke else weak(r.reported, r.compare, r.tolerance, r.spread,
                                 r.scale if isinstance(r.scale, str) else "linear", r.reproduced, contrast)
        for r, contrast in zip(merged.itertuples(), _contrast_values(merged))
    ]
    # A row's note: the reference's (why a reading exists, what a mismatch means), else the claim's; a failure or
    # a row that did not run says why first.
    reference_note = merged["note"].fillna("") if "note" in merged else pd.Series("", index=merged.index)
    note = reference_note.where(reference_note != "", merged["claim_note"].fillna(""))
    borrowed = ["a single run: its spread is the widest its item's runs show, relative to the value"
                if b else "" for b in merged["borrowed"]]
    merged["note"] = ["; ".join(filter(None, (j.reason, b, n))) for j, b, n in zip(judgements, borrowed, note)]
    merged["origin"] = row_origins(merged["item"], merged["verdict"], origins)
    return merged


def score_files(
    reference_files: Iterable[str | Path], claims_files: Iterable[str | Path], preset: str,
    origins: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The references of ``reference_files`` scored against the claims files that exist (``SCORED_COLUMNS``), for
    the run made with ``preset``: compared to the paper for the paper configuration (its data-free subset
    included), a smoke run's rows for any other preset. ``origins``: {item id: where its numbers come from}
    (isonorm.bundles.ledger.item_origins), the rows' ``origin`` (:func:`row_origins`)."""
    scored = score(load_all_references(reference_files), read_all_claims(claims_files),
                   smoke=preset != PAPER_PRESET, origins=origins)
    scored["preset"] = preset
    return _texts_filled(scored.loc[:, list(SCORED_COLUMNS)])


def build_scoreboard(
    reference_files: Iterable[str | Path], claims_files: Iterable[str | Path], preset: str,
    origins: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """The scoreboard table (``SCOREBOARD_COLUMNS``) of ``reference_files`` and ``claims_files`` scored together
    (:func:`score_files`)."""
    return score_files(reference_files, claims_files, preset, origins).loc[:, list(SCOREBOARD_COLUMNS)]


def scoreboard_of(scored: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """The scoreboard (``SCOREBOARD_COLUMNS``) from each paper's scored rows, in paper order: the rows as
    :func:`build_scoreboard` gives them for all the papers at once, every paper's referenced rows first, then the
    claims no reference lists (those rows have no ``compare``)."""
    frames = [frame.loc[:, list(SCOREBOARD_COLUMNS)] for frame in scored if len(frame)]
    if not frames:
        return pd.DataFrame(columns=list(SCOREBOARD_COLUMNS))
    board = pd.concat(frames, ignore_index=True)
    unreferenced = board["compare"].isna()
    return pd.concat([board[~unreferenced], board[unreferenced]], ignore_index=True)


# Free-text columns: empty, never missing (a CSV reads an empty cell back as missing).
TEXT_COLUMNS = ("basis_detail", "same_as", "within", "note", "origin")


def _texts_filled(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(**{c: as_text(frame[c]) for c in TEXT_COLUMNS})


def write_scoreboard(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write the scoreboard CSV atomically (temp file, then rename)."""
    return write_text_atomically(path, frame.loc[:, list(SCOREBOARD_COLUMNS)].to_csv(index=False))


def unfinished_rows(frame: pd.DataFrame, unfinished: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """``frame`` with the unmeasured rows (``not-run``; a smoke run's ``not-produced``) of each item in
    ``unfinished`` ({item id: {state, cause, log}}, isonorm.items.unfinished_items) saying why. A job of the item
    failed: the rows turn ``failed`` (a failed measurement is a failure, docs/decisions/README.md, "Verdicts"), their
    origin ``failed (log: <the job's log>)`` (:func:`failed_origin`). Its input
    could not be made, or the run stopped before its job: the rows stay ``not-run``, the root cause in the note (the
    item was not measured; what failed was another job, counted once as that job's failure). Rows measured from the
    item's other results keep their verdict, and their note says so: a relation over the item's data sets then
    holds for those that ran."""
    frame = frame.copy()
    of_unfinished = frame["item"].isin(list(unfinished))
    rows = of_unfinished & frame["verdict"].isin([NOT_RUN, NOT_PRODUCED])
    for index in frame.index[rows]:
        why = unfinished[frame.at[index, "item"]]
        if why["state"] == "failed":
            frame.at[index, "verdict"], frame.at[index, "note"] = FAILED, f"the job failed in this run: {why['cause']}"
            frame.at[index, "origin"] = failed_origin(why.get("log"))
        else:
            frame.at[index, "verdict"], frame.at[index, "note"] = NOT_RUN, f"not run in this run: {why['cause']}"
            frame.at[index, "origin"] = ORIGIN_NOT_RUN
    measured = of_unfinished & ~rows
    frame.loc[measured, "note"] = [f"{note}; {PART_MEASURED}" if note else PART_MEASURED
                                   for note in frame.loc[measured, "note"].fillna("")]
    return frame


def write_scored(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write a paper's scored rows (``SCORED_COLUMNS``, :func:`score_files`) atomically, as CSV."""
    return write_text_atomically(path, frame.loc[:, list(SCORED_COLUMNS)].to_csv(index=False))


def read_scored(path: str | Path) -> pd.DataFrame:
    """A paper's scored rows as :func:`score_files` made them: text columns as text, numbers as written (pandas
    writes and reads a float to the bit), so the scoreboard built from them is the one a single scoring gives.

    A file written before the ``origin`` column (an older run's) still reads: each of its rows' origin is
    :data:`UNKNOWN_ORIGIN` (kind ``unknown``), which the pages show as such; scoring again (the paper_claims job,
    which reruns for its new ``origins`` parameter) fills it. Any other missing column is an error."""
    return _read_csv(path, SCORED_COLUMNS, "scored rows", "the paper_claims rule writes them",
                     dtype={c: str for c in SCORED_COLUMNS if c not in (*NUMBER_COLUMNS, "weak")})


def read_scoreboard(path: str | Path) -> pd.DataFrame:
    """The scoreboard CSV (``SCOREBOARD_COLUMNS``); one from before the ``origin`` column reads as
    :func:`read_scored` says."""
    return _read_csv(path, SCOREBOARD_COLUMNS, "scoreboard", "build it first (report.write_scoreboard)")


def _read_csv(path: str | Path, columns: Iterable[str], what: str, made_by: str, **options: Any) -> pd.DataFrame:
    """A CSV this module wrote, its empty cells missing (text columns then filled with ""); without an ``origin``
    column (written before it existed), its rows' origin unknown."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{what} {path} not found; {made_by}")
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], **options)
    missing = [c for c in columns if c not in frame.columns]
    if missing == ["origin"]:  # an older run's file: whole but for the origin, which it did not record
        frame["origin"], missing = UNKNOWN_ORIGIN, []
    if missing:
        raise ValueError(f"{path}: not a whole {what} file, missing column(s) {missing}")
    return _texts_filled(frame)


def counted_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that count at all: one per reported value (a row that repeats another's value, ``same_as``, is
    shown but counted under that row; "Counting")."""
    repeats = as_text(_column(frame, "same_as")).str.strip() != ""
    return frame[~repeats]


def headline_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows the headline counts: default readings of a reproduction (and no-reference rows, which have no
    reading), one per reported value; alternatives, fitted readings and consistency checks are counted apart
    ("Verdicts")."""
    frame = counted_rows(frame)
    mask = [counts_in_headline(r, c) for r, c in zip(_column(frame, "reading"), _column(frame, "check"))]
    return frame[pd.Series(mask, index=frame.index, dtype=bool)]


def _column(frame: pd.DataFrame, name: str) -> pd.Series:
    """A column of the scoreboard, or an empty one where a frame lacks it (a key that defaults)."""
    return frame[name] if name in frame else pd.Series(None, index=frame.index, dtype=object)


def is_smoke(frame: pd.DataFrame) -> bool:
    """Whether the scoreboard is a smoke run's (a preset other than the paper configuration: not compared)."""
    presets = _column(frame, "preset").astype(object).fillna(PAPER_PRESET)  # objects: no string into a float column
    return bool(len(frame)) and bool((presets != PAPER_PRESET).any())


def verdict_columns(frame: pd.DataFrame) -> tuple[str, ...]:
    """The verdicts a summary of ``frame`` counts: ``SMOKE_VERDICTS`` for a smoke run, else ``HEADLINE_VERDICTS``."""
    return SMOKE_VERDICTS if is_smoke(frame) else HEADLINE_VERDICTS


def summarize_scoreboard(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts of the headline rows (:func:`headline_rows`) per paper (rows) and verdict (columns, in
    :func:`verdict_columns` order: a fitted reading is never a headline row), with a ``total`` row and column. A
    smoke run counts every row: none is compared, so none is counted apart."""
    columns = verdict_columns(frame)
    frame = counted_rows(frame) if is_smoke(frame) else headline_rows(frame)
    counts = (pd.crosstab(frame["paper"], frame["verdict"]) if len(frame) else pd.DataFrame()).reindex(
        columns=list(columns), fill_value=0)
    counts.loc["total"] = counts.sum()
    counts["total"] = counts.sum(axis=1)
    counts.index.name, counts.columns.name = "paper", None
    return counts.astype(int)


def _is_weak(frame: pd.DataFrame) -> pd.Series:
    """The ``weak`` column as booleans (a CSV gives strings or NaN for rows without a reference)."""
    return _column(frame, "weak").map(marked_weak).astype(bool)


def apart_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per paper (rows, plus ``total``): what the headline leaves out or qualifies ("Verdicts"): ``precision`` and
    ``seed_noise`` (the default rows that match at the reference's own precision, and those that match only within
    the reported value's seed noise), ``weak`` (weak default rows that match), ``alternatives`` and
    ``alternatives_match`` (scored alternative readings, and how many match), ``consistency`` and
    ``consistency_hold`` (scored consistency checks, and how many hold),
    ``fitted`` (fitted readings, never a match), one row per reported value (the inconclusive default rows are a
    column of :func:`summarize_scoreboard`)."""
    frame = counted_rows(frame)
    scored = frame[frame["verdict"].isin(SCORED)]
    headline = headline_rows(scored)
    alternatives = scored[(_column(scored, "reading") == ALTERNATIVE) & (_column(scored, "check") != CONSISTENCY)]
    consistency = scored[_column(scored, "check") == CONSISTENCY]
    matches = headline[headline["verdict"] == MATCH]
    parts = {
        "precision": matches[_column(matches, "within") != SEED_NOISE],
        "seed_noise": matches[_column(matches, "within") == SEED_NOISE],
        "weak": matches[_is_weak(matches)],
        "alternatives": alternatives, "alternatives_match": alternatives[alternatives["verdict"] == MATCH],
        "consistency": consistency, "consistency_hold": consistency[consistency["verdict"] == MATCH],
        "fitted": frame[(_column(frame, "reading") == FITTED_READING) | (frame["verdict"] == FITTED)],
    }
    papers = sorted(set(frame["paper"].dropna()))
    table = pd.DataFrame({name: part.groupby("paper").size().reindex(papers, fill_value=0)
                          for name, part in parts.items()}, index=pd.Index(papers, name="paper"), dtype=int)
    table.loc["total"] = table.sum()
    return table.astype(int)


def headline(frame: pd.DataFrame) -> str:
    """The index's headline: "<matches> of <scored> default rows match (<p> at the reference's precision, <n> within
    its seed noise; <weak> weak); <mismatches> mismatch; <failed> failed; <not run> not run (<k> of them: an input
    could not be made, <root job> failed); <inconclusive> inconclusive; alternatives m/n; consistency m/n; fitted k"
    (scored = match, mismatch or failed, the rows the run decided; weak = weak matches; a failed job's rows are
    failed, an item whose input could not be made is not run, its root failure named once)."""
    counts = summarize_scoreboard(frame).loc["total"]
    if is_smoke(frame):
        return (f"Smoke run ({frame['preset'].iloc[0]} preset), not compared to the papers: {counts[COMPUTED]} of "
                f"{counts['total']} quantities computed; {counts[FAILED]} failed (its job failed, or NaN or infinite); "
                f"{counts[NOT_PRODUCED]} not produced at these sizes; {counts[NOT_RUN]} in items that did not run"
                f"{_blocked_by(counted_rows(frame))}")
    apart = apart_counts(frame).loc["total"]
    scored = int(sum(counts[v] for v in SCORED))
    return (f"{counts[MATCH]} of {scored} default rows match ({apart['precision']} at the reference's precision, "
            f"{apart['seed_noise']} within its seed noise; {apart['weak']} weak); {counts[MISMATCH]} mismatch; "
            f"{counts[FAILED]} failed; {counts[NOT_RUN]} not run{_blocked_by(headline_rows(frame))}; "
            f"{counts[INCONCLUSIVE]} inconclusive; "
            f"alternatives {apart['alternatives_match']}/{apart['alternatives']}; "
            f"consistency {apart['consistency_hold']}/{apart['consistency']}; fitted {apart['fitted']}")


def origin_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows whose origins the index counts: the headline's (:func:`headline_rows`; a smoke run's every counted
    row, as its headline counts them)."""
    return counted_rows(frame) if is_smoke(frame) else headline_rows(frame)


def origin_counts(frame: pd.DataFrame) -> dict[str, int]:
    """{origin kind: rows} over :func:`origin_rows`, every kind of ``ORIGIN_KINDS`` in its order."""
    kinds = [origin_kind(text) for text in _column(origin_rows(frame), "origin")]
    return {kind: kinds.count(kind) for kind in ORIGIN_KINDS}


def origin_line(frame: pd.DataFrame) -> str:
    """The index's line under the headline: "Where the numbers come from: 120 computed here, 40 imported (bundle
    real-data-cpu-2026-12-02), 3 failed, 458 not run", over the rows the headline counts (:func:`origin_rows`); a
    kind no row has is left out, and the imported and stale kinds name their bundles."""
    rows = origin_rows(frame)
    texts = list(_column(rows, "origin"))
    kinds = [origin_kind(text) for text in texts]
    words = {ORIGIN_COMPUTED: "computed here", ORIGIN_IMPORTED: "imported", ORIGIN_STALE: "imported stale",
             ORIGIN_FAILED: "failed", ORIGIN_NOT_RUN: "not run", ORIGIN_UNKNOWN: "of unknown origin"}
    parts = []
    for kind in ORIGIN_KINDS:
        count = kinds.count(kind)
        if not count:
            continue
        bundles = list(dict.fromkeys(b for t, k in zip(texts, kinds) if k == kind for b in origin_bundles(t)))
        named = f" (bundle{'s' if len(bundles) > 1 else ''} {', '.join(bundles)})" if bundles else ""
        parts.append(f"{count} {words[kind]}{named}")
    return "Where the numbers come from: " + (", ".join(parts) if parts else "no rows yet")


# The note unfinished_rows gives a row whose item could not run because an input of it was not made (a failed
# download): "… it needs <the job at the root>, which failed: <its cause> …" (isonorm.run_status).
_ROOT = re.compile(r"needs (\S+), which failed: ")


def _blocked_by(frame: pd.DataFrame) -> str:
    """`` (N of them: an input could not be made, <root job> failed[, and k other inputs])``, for the not-run rows
    whose note names a failed root (unfinished_rows): the root failure is named once, the run's summary on the
    index lists each with its cause."""
    notes = _column(frame, "note")[frame["verdict"] == NOT_RUN].fillna("").astype(str)
    roots = [found.group(1) for found in map(_ROOT.search, notes) if found]
    if not roots:
        return ""
    distinct = list(dict.fromkeys(roots))
    others = f", and {len(distinct) - 1} other input(s)" if len(distinct) > 1 else ""
    return f" ({len(roots)} of them: an input could not be made, {distinct[0]} failed{others})"


def match_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Per paper (rows, plus ``total``) and provenance (columns): matches / scored headline rows, as "m / n" with
    the percentage; scored = match, mismatch or failed (not-run, fitted and no-reference rows have no verdict to
    count; alternatives and consistency checks are counted apart, :func:`apart_counts`)."""
    scored = headline_rows(frame)
    scored = scored[scored["verdict"].isin(SCORED)]
    papers = sorted(set(frame["paper"].dropna()))
    table = {}
    for provenance in PROVENANCES:
        column = {}
        for paper in [*papers, "total"]:
            part = scored[scored["provenance"] == provenance]
            part = part if paper == "total" else part[part["paper"] == paper]
            matched, total = int((part["verdict"] == MATCH).sum()), len(part)
            column[paper] = f"{matched} / {total} ({100 * matched / total:.0f} %)" if total else "–"
        table[provenance] = column
    rates = pd.DataFrame(table)
    rates.index.name = "paper"
    return rates
