"""Rule entry point: <report root>/index.html and scoreboard.html (verdicts, item grid, provenance, runtime)."""

from glob import glob
from pathlib import Path

from isonorm.provenance import provenance
from isonorm.report import build_index
from isonorm.report.papers import paper_pages
from isonorm.report.site import job_devices
from isonorm.workflow import logged_job

with logged_job(snakemake):
    report_dir = Path(snakemake.output.index).parent
    results = Path(snakemake.params.benchmarks).parent  # <RESULTS>/benchmarks
    build_index(
        report_dir=report_dir,
        scoreboard_csv=snakemake.input.scoreboard,
        papers=paper_pages(snakemake.params.papers),
        config=dict(snakemake.params.config),
        benchmark_files=sorted(glob(f"{snakemake.params.benchmarks}/**/*.tsv", recursive=True)),
        provenance=provenance(),
        preset=snakemake.params.preset,
        # every experiment's results file, <RESULTS>/<slug>/<experiment>/<variant>.parquet, and its device (by
        # slug: the paper configuration's root holds other presets' roots)
        devices=job_devices(sorted(p for slug in snakemake.params.papers for p in results.glob(f"{slug}/*/*.parquet")),
                            results),
    )
