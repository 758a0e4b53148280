"""Bundles through the workflow (docs/bundles.md): a run exported and imported into a fresh checkout scores alike
and runs no job again; the shipped bundle gives a fresh clone without data or GPU its trained rows, labelled."""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

from conftest import PAPER, QUICK, REPO, copy_workflow, snakemake

SHIPPED = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))["bundles"]
REPORT_RULES = {"paper_claims", "paper_notebook", "scoreboard", "report_index", "all"}


def job_stats(output: str) -> dict[str, int]:
    """{rule: jobs} of the table Snakemake prints before it runs ("Job stats:")."""
    table = output.split("Job stats:", 1)[1].split("total", 1)[0] if "Job stats:" in output else ""
    return {name: int(n) for name, n in re.findall(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as stream:
        return list(csv.reader(stream))


def test_an_exported_run_imported_into_a_fresh_checkout_scores_alike_and_runs_no_job_again(quick_run, tmp_path):
    bundle = tmp_path / "quick-run.tar"
    export = subprocess.run([sys.executable, "-m", "isonorm.bundles", "export", str(bundle), "--preset", "quick"],
                            cwd=quick_run, capture_output=True, text=True)
    assert export.returncode == 0, export.stderr
    fresh = copy_workflow(tmp_path / "fresh")
    board = f"{QUICK['results']}/scoreboard.csv"
    done = snakemake(fresh, "--cores", "2", "--configfile", "presets/quick.yaml", "--config", f"bundles=[{bundle}]",
                     "--", board)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-5000:]
    assert re.search(r"bundle quick-run \(.*\): (\d+) of \1 results files used", output), output[-5000:]
    ran = job_stats(output)
    assert ran and set(ran) <= REPORT_RULES, ran  # claims and scoreboard only: no experiment, no fetch
    before, after = rows(quick_run / board), rows(fresh / board)
    origin = before[0].index("origin")
    assert [r[:origin] + r[origin + 1:] for r in after] == [r[:origin] + r[origin + 1:] for r in before]
    for was, now in zip(before[1:], after[1:]):
        if was[origin].startswith("computed"):
            assert now[origin].startswith("imported from quick-run ("), now
        else:
            assert now[origin] == was[origin]


def test_a_fresh_clone_without_data_or_gpu_reports_the_shipped_bundles_trained_rows(tmp_path):
    assert SHIPPED, "config.yaml ships a bundle (docs/bundles.md, 'The shipped bundle')"
    fresh = copy_workflow(tmp_path / "fresh")
    done = snakemake(fresh, "--cores", "2", "--config", "compute=data-free", "papers=[lu2024]",
                     env={"CUDA_VISIBLE_DEVICES": ""})
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-5000:]
    assert "stale, not used" not in output, (
        "the shipped bundle is stale: the code or settings of its jobs changed since it was made; make it again "
        "(docs/bundles.md, 'The shipped bundle')\n" + output[-3000:])
    ran = job_stats(output)
    assert not {"lu2024_table1", "fetch_data"} & set(ran), ran
    scored = pd.read_csv(fresh / PAPER["results"] / "lu2024" / "scored.csv", dtype=str, keep_default_na=False)
    table1 = scored[(scored["item"] == "lu2024-table1") & (scored["reading"] == "default")]
    imported = table1[table1["origin"].str.startswith("imported from real-data-cpu")]
    assert len(imported) > 0, table1[["quantity", "verdict", "origin"]].to_string()
    assert set(imported["verdict"]) <= {"match", "mismatch", "inconclusive"}, imported["verdict"].tolist()
    page = (fresh / PAPER["report"] / "lu2024.html").read_text(encoding="utf-8")
    index = (fresh / PAPER["report"] / "index.html").read_text(encoding="utf-8")
    assert "imported from real-data-cpu" in page and "imported" in index
