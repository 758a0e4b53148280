"""The verdicts: what each paper reported, what this run measured, and how the two are judged (architecture §7).

Below the papers' code and above nothing of the report: the experiment modules import ``claims`` (their
claims functions return :class:`~isonorm.verdicts.claims.Measured` values), ``isonorm.items`` imports ``ids``,
and the report renders the rows scored here without deciding anything itself.

- ``ids``            paper slugs and item ids (architecture §2, a contract)
- ``references``     load ``notebooks/reference/<slug>.yaml`` (what each paper reported); ``readoff_values``
  recomputes a value read off a figure from the coordinates and calibration its row records
- ``claims``         ``results/<slug>/claims.parquet``: what the run measured, each value with its seed spread
- ``comparison``     the compare rules and verdicts, shared by every table that shows one
- ``scoreboard``     each paper's claims scored once (``results/<slug>/scored.csv``), ``results/scoreboard.csv``
  made of them, the notes of unfinished rows, and the headline's counts
- ``stages``         the claims and scoreboard rules' steps, run again by the end of a run from what exists
"""

from .claims import read_claims, write_claims
from .comparison import COMPARE_RULES, VERDICTS, verdict, within
from .ids import check_item_id
from .references import ReferenceFormatError, load_all_references, load_references, paper_title
from .scoreboard import SCOREBOARD_COLUMNS, build_scoreboard, read_scoreboard, summarize_scoreboard, write_scoreboard

__all__ = [
    "COMPARE_RULES", "SCOREBOARD_COLUMNS", "VERDICTS", "ReferenceFormatError", "build_scoreboard",
    "check_item_id", "load_all_references", "load_references", "paper_title", "read_claims", "read_scoreboard",
    "summarize_scoreboard", "verdict", "within", "write_claims", "write_scoreboard",
]
