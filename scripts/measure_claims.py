"""Rule entry point: a paper's checkable quantities from its results (rules/report.smk), measured by the claims
functions its items' records name (rules/common.smk PAPER_CLAIMS), then scored against its reference file (the
page's and the scoreboard's rows), each row with where its number came from (rules/common.smk item_origins)."""

from isonorm.verdicts.stages import paper_claims
from isonorm.workflow import logged_job

with logged_job(snakemake):
    paper_claims(snakemake.wildcards.slug, snakemake.params.claims, snakemake.params.results, snakemake.config,
                 snakemake.output.claims, snakemake.input.reference, snakemake.output.scored,
                 origins=snakemake.params.origins)
