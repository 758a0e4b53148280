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
from isonorm.verdicts.comparison import FAILED, INCONCLUSIVE, MATCH, MISMATCH, NOT_RUN, SCORED
from isonorm.verdicts.scoreboard import apart_counts, is_smoke, read_scoreboard, summarize_scoreboard

RESULTS = Path(__file__).resolve().parent / "results"


def item_verdicts(board: pd.DataFrame, items: list[str] | None) -> pd.DataFrame:
    """Per item, the headline's own counts (:func:`summarize_scoreboard`: its default rows by verdict) beside what
    it counts apart (:func:`apart_counts`: matches at precision or within seed noise, weak ones, checks, fitted
    rows): the scoreboard's counting with the item in the paper's place, so an item's row adds up as the index
    does (one row per reported value)."""
    if is_smoke(board):
        raise ValueError("a smoke run's scoreboard compares nothing to the papers: record a run of the paper "
                         "configuration (no preset)")
    if items:
        board = board[board["item"].isin(items)]
    by_item = board.assign(paper=board["item"])
    order = list(dict.fromkeys(board["item"]))  # the scoreboard's order; an item of checks alone has no headline row
    verdicts = summarize_scoreboard(by_item).drop(index="total").reindex(order, fill_value=0)
    apart = apart_counts(by_item).drop(index="total").reindex(order, fill_value=0)
    table = pd.DataFrame({
        "scored": verdicts[list(SCORED)].sum(axis=1), "match": verdicts[MATCH],
        "match_at_precision": apart["precision"], "match_within_seed_noise": apart["seed_noise"],
        "weak": apart["weak"], "mismatch": verdicts[MISMATCH], "failed": verdicts[FAILED],
        "inconclusive": verdicts[INCONCLUSIVE], "not_run": verdicts[NOT_RUN], "checks": apart["consistency"],
        "checks_hold": apart["consistency_hold"], "fitted": apart["fitted"]})
    return table.rename_axis("item").reset_index()


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
    items = item_verdicts(board, args.items)
    write_text_atomically(out / "items.csv", items.to_csv(index=False))
    write_text_atomically(out / "jobs.csv", job_costs(args.results).to_csv(index=False))
    write_text_atomically(out / "record.json", json.dumps({"run": args.note, **provenance_of(args.results)},
                                                          indent=1))
    print(items.to_string(index=False))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
