"""The scoreboard: every reported number next to the reproduced one, with a verdict (architecture §7, **contract**).

``results/scoreboard.csv`` has exactly the columns ``SCOREBOARD_COLUMNS``. A reference without a reproduced
value (claims file missing, quantity absent, or NaN) is ``not-run``; a reproduced quantity that no
reference lists is ``no-reference``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from .claims import CLAIM_COLUMNS, read_claims
from .comparison import VERDICTS, verdict
from ..atomic import write_text_atomically
from .ids import paper_of
from .references import PROVENANCES, load_all_references

SCOREBOARD_COLUMNS = ("paper", "item", "quantity", "reported", "reproduced", "tolerance", "verdict", "provenance",
                      "preset")


def read_all_claims(paths: Iterable[str | Path]) -> pd.DataFrame:
    """All existing claims files concatenated; a missing file contributes nothing (its items are not-run)."""
    frames = [read_claims(p) for p in paths if Path(p).is_file()]
    if not frames:
        return pd.DataFrame(columns=list(CLAIM_COLUMNS)).astype({"value": float})
    return pd.concat(frames, ignore_index=True)


def score(references: pd.DataFrame, claims: pd.DataFrame) -> pd.DataFrame:
    """References joined with claims on (item, quantity), with a ``verdict`` per row.

    Keeps the reference columns (``compare``, ``kind``, ``provenance``, ``description``, ``source``) and the claim's
    ``note`` so that the per-item tables in the paper pages can show them. Rows follow the reference
    files' order; claims no reference lists come last.
    """
    keys = ["item", "quantity"]
    # A row's note: the reference's (why a reading exists, what a mismatch means), else the claim's.
    claims = claims.rename(columns={"value": "reproduced", "note": "claim_note"})
    referenced = references.merge(claims, on=keys, how="left")  # keeps the reference files' order
    unreferenced = claims.merge(references[keys], on=keys, how="left", indicator=True)
    unreferenced = unreferenced[unreferenced["_merge"] == "left_only"].drop(columns="_merge")
    merged = pd.concat([referenced, unreferenced], ignore_index=True)
    merged["paper"] = merged["item"].map(paper_of)
    reference_note = merged["note"] if "note" in merged else pd.Series("", index=merged.index)
    merged["note"] = reference_note.fillna("").where(reference_note.fillna("") != "", merged["claim_note"].fillna(""))
    merged["verdict"] = [
        verdict(row.reproduced, row.reported, row.compare, row.tolerance) for row in merged.itertuples()
    ]
    return merged


def build_scoreboard(
    reference_files: Iterable[str | Path], claims_files: Iterable[str | Path], preset: str
) -> pd.DataFrame:
    """The scoreboard table (``SCOREBOARD_COLUMNS``) for the run made with ``preset``."""
    scored = score(load_all_references(reference_files), read_all_claims(claims_files))
    scored["preset"] = preset
    return scored.loc[:, list(SCOREBOARD_COLUMNS)]


def write_scoreboard(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write the scoreboard CSV atomically (temp file, then rename)."""
    return write_text_atomically(path, frame.loc[:, list(SCOREBOARD_COLUMNS)].to_csv(index=False))


def read_scoreboard(path: str | Path) -> pd.DataFrame:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"scoreboard {path} not found; build it first (report.write_scoreboard)")
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
    missing = [c for c in SCOREBOARD_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{path}: not a scoreboard, missing column(s) {missing}")
    return frame


def summarize_scoreboard(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts per paper (rows) and verdict (columns, in ``VERDICTS`` order), with a ``total`` row and column."""
    counts = (pd.crosstab(frame["paper"], frame["verdict"]) if len(frame) else pd.DataFrame()).reindex(
        columns=list(VERDICTS), fill_value=0)
    counts.loc["total"] = counts.sum()
    counts["total"] = counts.sum(axis=1)
    counts.index.name, counts.columns.name = "paper", None
    return counts.astype(int)


def match_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Per paper (rows, plus ``total``) and provenance (columns): matches / scored references, as "m / n" with
    the percentage; scored = match or mismatch (not-run and no-reference rows have no verdict to count)."""
    scored = frame[frame["verdict"].isin(["match", "mismatch"])]
    papers = sorted(set(frame["paper"].dropna()))
    table = {}
    for provenance in PROVENANCES:
        column = {}
        for paper in [*papers, "total"]:
            part = scored[scored["provenance"] == provenance]
            part = part if paper == "total" else part[part["paper"] == paper]
            matched, total = int((part["verdict"] == "match").sum()), len(part)
            column[paper] = f"{matched} / {total} ({100 * matched / total:.0f} %)" if total else "–"
        table[provenance] = column
    rates = pd.DataFrame(table)
    rates.index.name = "paper"
    return rates
