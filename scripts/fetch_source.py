"""Rule entry point of every data-stage rule: fetch, stage or build one named input (rules/data.smk)."""

from isonorm.workflow import fetch_source, logged_job

with logged_job(snakemake):
    fetch_source(snakemake)
