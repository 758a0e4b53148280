"""Rule entry point: execute a paper's notebook with papermill and render it to <report root>/<slug>.html, with
the reference file and the scored rows the rule declares as inputs."""

from isonorm.report.stages import paper_page
from isonorm.workflow import logged_job

with logged_job(snakemake):
    paper_page(snakemake.wildcards.slug, snakemake.input.notebook, snakemake.params.results_dir,
               snakemake.output.page, snakemake.output.executed, snakemake.config, snakemake.params.not_run,
               snakemake.log[0], references=snakemake.input.reference, scored=snakemake.input.scored)
