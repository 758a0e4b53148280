"""Runtime per rule from Snakemake ``benchmark:`` files (architecture §3: "the report shows runtime per rule").

A benchmark file is a TSV with columns ``s  h:m:s  max_rss ...`` (one row per repeat), written to
``results/benchmarks/<rule>/<wildcards>.tsv``; the rule name and wildcards are read from that path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

BENCHMARK_DIR = "benchmarks"
BENCHMARK_COLUMNS = ("rule", "wildcards", "seconds", "max_rss_mb", "repeats")


def rule_and_wildcards(path: str | Path) -> tuple[str, str]:
    """``results/benchmarks/train/lu2024/bn.tsv`` -> (``train``, ``lu2024/bn``).

    A rule without wildcards may write ``results/benchmarks/<rule>.tsv``: wildcards are then ``""``.
    """
    parts = Path(path).with_suffix("").parts
    if BENCHMARK_DIR in parts[:-1]:
        below = parts[len(parts) - parts[::-1].index(BENCHMARK_DIR):]
        if below:
            return below[0], "/".join(below[1:])
    raise ValueError(
        f"benchmark file {path} is not at results/benchmarks/<rule>/<wildcards>.tsv; "
        "set the rule's `benchmark:` to that pattern"
    )


def read_benchmark(path: str | Path) -> dict[str, object]:
    """One job's runtime: mean wall seconds over repeats, peak resident memory (MB, NaN when not measured)."""
    rule, wildcards = rule_and_wildcards(path)
    table = pd.read_csv(path, sep="\t")
    if "s" not in table.columns or table.empty:
        raise ValueError(f"{path}: not a Snakemake benchmark file (needs a column `s` and at least one row)")
    # Snakemake writes "-" or "NA" where it could not measure memory.
    rss = pd.to_numeric(table.get("max_rss", pd.Series(dtype=float)), errors="coerce")
    return {
        "rule": rule,
        "wildcards": wildcards,
        "seconds": float(pd.to_numeric(table["s"], errors="coerce").mean()),
        "max_rss_mb": float(rss.max()) if rss.notna().any() else float("nan"),
        "repeats": len(table),
    }


def read_benchmarks(paths: Iterable[str | Path]) -> pd.DataFrame:
    """One row per job (``BENCHMARK_COLUMNS``); files that do not exist (jobs not run yet) are skipped."""
    rows = [read_benchmark(p) for p in paths if Path(p).is_file()]
    return pd.DataFrame(rows, columns=list(BENCHMARK_COLUMNS)).sort_values(["rule", "wildcards"], ignore_index=True)


def runtime_per_rule(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per rule: number of jobs, total and longest wall seconds, peak memory."""
    return (
        jobs.groupby("rule")
        .agg(jobs=("wildcards", "size"), total_s=("seconds", "sum"), longest_s=("seconds", "max"),
             max_rss_mb=("max_rss_mb", "max"))
        .reset_index()
    )
