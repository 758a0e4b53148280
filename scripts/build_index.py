"""Rule entry point: report/index.html (papers, scoreboard, provenance, runtime per rule)."""

from glob import glob

from isonorm.provenance import provenance
from isonorm.report import build_index
from isonorm.report.papers import paper_pages
from isonorm.workflow import logged_job

with logged_job(snakemake):
    build_index(
        report_dir="report",
        scoreboard_csv=snakemake.input.scoreboard,
        papers=paper_pages("report"),
        config=dict(snakemake.params.config),
        benchmark_files=sorted(glob("results/benchmarks/**/*.tsv", recursive=True)),
        provenance=provenance(),
        preset=snakemake.params.preset,
    )
