"""Rule entry point: download, stage or generate one data set (rules/data.smk)."""

from isonorm.data import fetch_dataset
from isonorm.workflow import logged_job

with logged_job(snakemake):
    spec = {key: value for key, value in snakemake.params.spec.items() if value is not None}
    fetch_dataset(
        snakemake.wildcards.dataset,
        root=snakemake.params.root,
        source=spec.pop("source"),
        retries=snakemake.params.retries,
        **spec,
    )
