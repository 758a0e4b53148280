"""Rule entry point: <report root>/index.html and scoreboard.html (verdicts, item grid, provenance, runtime)."""

from isonorm.report.stages import site_index
from isonorm.workflow import logged_job

with logged_job(snakemake):
    site_index(snakemake.output.index, snakemake.input.scoreboard, snakemake.params.papers,
               snakemake.input.references, snakemake.params.config, snakemake.params.benchmarks,
               snakemake.params.run_summary)
