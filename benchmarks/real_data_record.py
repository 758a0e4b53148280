"""The record of a finished paper-settings run: its scoreboard, its verdicts per item and what each job cost.

A run's results live in its checkout (``results/``). This script copies what a reader of the repository needs to see
the run's verdicts without running it: the scoreboard as the run wrote it, one row per item with its verdict counts
(the headline's rows and the checks apart), one row per job with its wall and CPU seconds from Snakemake's
``benchmark:`` files, and the run's provenance (commit, machine, packages: from the results' Parquet metadata),
into ``results/<name>/`` beside this script. It computes nothing: every number comes from the run's own files.

    python benchmarks/real_data_record.py --results ../realrun/results --name real-data-cpu-2026-11-29 \\
        --items lu2024-table1 lu2024-table3 lu2024-apptable4 lu2024-fig2 joudaki2023-figb4 meterez2024-tabled1

``--items`` picks the items the per-item table lists (default: every item with a scored row).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from isonorm.atomic import write_text_atomically
from isonorm.report.comparison import CONSISTENCY, MATCH, MISMATCH, SCORED, counts_in_headline, marked_weak
from isonorm.report.scoreboard import SEED_NOISE, read_scoreboard

RESULTS = Path(__file__).resolve().parent / "results"


def item_verdicts(board: pd.DataFrame, items: list[str] | None) -> pd.DataFrame:
    """Per item: its default reproduction rows by verdict (matches split by what decided them, weak ones counted),
    its consistency checks and how many hold, its fitted rows."""
    rows = []
    for item, part in board.groupby("item", sort=False):
        if items and item not in items:
            continue
        headline = part[[counts_in_headline(r, c) for r, c in zip(part["reading"], part["check"])]]
        matches = headline[headline["verdict"] == MATCH]
        checks = part[part["check"] == CONSISTENCY]
        rows.append({
            "item": item, "scored": int(headline["verdict"].isin(SCORED).sum()), "match": len(matches),
            "match_at_precision": int((matches["within"] != SEED_NOISE).sum()),
            "match_within_seed_noise": int((matches["within"] == SEED_NOISE).sum()),
            "weak": int(matches["weak"].map(marked_weak).sum()),
            "mismatch": int((headline["verdict"] == MISMATCH).sum()),
            "failed": int((headline["verdict"] == "failed").sum()),
            "inconclusive": int((headline["verdict"] == "inconclusive").sum()),
            "not_run": int((headline["verdict"] == "not-run").sum()),
            "checks": int(checks["verdict"].isin(SCORED).sum()), "checks_hold": int((checks["verdict"] == MATCH).sum()),
            "fitted": int((part["reading"] == "fitted").sum()),
        })
    return pd.DataFrame(rows)


def job_costs(results: Path) -> pd.DataFrame:
    """One row per job with a ``benchmark:`` file: rule, wildcards (the file's name), wall and CPU seconds."""
    rows = []
    for tsv in sorted((results / "benchmarks").glob("*/*.tsv")):
        first = pd.read_csv(tsv, sep="\t").iloc[0]
        rows.append({"rule": tsv.parent.name, "job": tsv.stem, "wall_s": float(first["s"]),
                     "cpu_s": float(first["cpu_time"]), "max_rss_mb": float(first["max_rss"])})
    return pd.DataFrame(rows)


def provenance_of(results: Path) -> dict:
    """The provenance a results file of the run carries (commit, packages, device), from its Parquet metadata."""
    for path in sorted(results.glob("*/*/*.parquet")):
        metadata = pq.read_metadata(path).metadata or {}
        if b"isonorm" in metadata:
            recorded = json.loads(metadata[b"isonorm"])
            return {key: recorded[key] for key in ("git_commit", "device", "packages", "python", "host")
                    if key in recorded}
    return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, required=True, help="the run's results root")
    parser.add_argument("--name", required=True, help="the record's folder under benchmarks/results/")
    parser.add_argument("--items", nargs="*", default=None)
    parser.add_argument("--note", default="", help="how the run was made (its command and config overlay)")
    args = parser.parse_args()
    out = RESULTS / args.name
    out.mkdir(parents=True, exist_ok=True)
    board = read_scoreboard(args.results / "scoreboard.csv")
    shutil.copyfile(args.results / "scoreboard.csv", out / "scoreboard.csv")
    write_text_atomically(out / "items.csv", item_verdicts(board, args.items).to_csv(index=False))
    write_text_atomically(out / "jobs.csv", job_costs(args.results).to_csv(index=False))
    write_text_atomically(out / "record.json", json.dumps({"run": args.note, **provenance_of(args.results)},
                                                          indent=1))
    print(item_verdicts(board, args.items).to_string(index=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
