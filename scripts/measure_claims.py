"""Rule entry point: a paper's checkable quantities from its results (rules/report.smk), measured by the claims
functions its rules/<slug>.smk registers."""

from isonorm.report.claims import measure_parts
from isonorm.results import write_results
from isonorm.workflow import logged_job, resolve_function

with logged_job(snakemake):
    slug = snakemake.wildcards.slug
    parts = [resolve_function(spec) for spec in snakemake.params.claims]
    frame = measure_parts(slug, parts, snakemake.params.results, snakemake.config[slug])
    write_results(frame, snakemake.output[0], config={"paper": slug, "preset": snakemake.config["preset"]})
