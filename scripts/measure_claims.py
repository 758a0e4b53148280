"""Rule entry point: a paper's checkable quantities from its results (rules/report.smk)."""

import importlib

from isonorm.results import write_results
from isonorm.workflow import logged_job

with logged_job(snakemake):
    slug = snakemake.wildcards.slug
    claims = importlib.import_module(f"isonorm.experiments.{slug}.claims")
    frame = claims.measure(snakemake.params.results, snakemake.config[slug])
    write_results(frame, snakemake.output[0], config={"paper": slug, "preset": snakemake.config["preset"]})
