"""Rule entry point of both fetch rules (fetch_data, fetch_checkpoint): fetch one named input (rules/data.smk)."""

from isonorm.workflow import fetch_source, logged_job

with logged_job(snakemake):
    fetch_source(snakemake)
