"""Rule entry point: download, stage or build one checkpoint (rule fetch_checkpoint)."""

from isonorm.checkpoints import fetch_checkpoint
from isonorm.workflow import logged_job

with logged_job(snakemake):
    spec = {key: value for key, value in snakemake.params.spec.items() if value is not None}
    fetch_checkpoint(
        snakemake.wildcards.model,
        root=snakemake.params.root,
        source=spec.pop("source"),
        retries=snakemake.params.retries,
        **spec,
    )
