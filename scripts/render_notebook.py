"""Rule entry point: execute a paper's notebook with papermill and render it to <report root>/<slug>.html."""

from pathlib import Path

from isonorm.report.stages import paper_page
from isonorm.workflow import logged_job

with logged_job(snakemake):
    paper_page(snakemake.wildcards.slug, snakemake.input.notebook, Path(snakemake.input.claims).parent,
               snakemake.output.page, snakemake.output.executed, snakemake.config, snakemake.params.not_run,
               snakemake.log[0])
