"""Rule entry point: freeze one small text corpus into texts.json (rule fetch_texts)."""

from isonorm.data import fetch_texts
from isonorm.workflow import logged_job

with logged_job(snakemake):
    spec = {key: value for key, value in snakemake.params.spec.items() if value is not None}
    fetch_texts(
        snakemake.wildcards.texts,
        root=snakemake.params.root,
        source=spec.pop("source"),
        retries=snakemake.params.retries,
        **spec,
    )
