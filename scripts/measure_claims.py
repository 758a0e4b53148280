"""Rule entry point: a paper's checkable quantities from its results (rules/report.smk), measured by the claims
functions its items' records name (rules/common.smk PAPER_CLAIMS), then scored against its reference file (the
page's and the scoreboard's rows), each row with where its number came from (isonorm.bundles.ledger), read here,
when the results exist (a param would be read before they do)."""

from isonorm.bundles.ledger import paper_origins
from isonorm.verdicts.stages import paper_claims
from isonorm.workflow import logged_job

with logged_job(snakemake):
    paper_claims(snakemake.wildcards.slug, snakemake.params.claims, snakemake.params.results, snakemake.config,
                 snakemake.output.claims, snakemake.input.reference, snakemake.output.scored,
                 origins=paper_origins(snakemake.wildcards.slug, snakemake.params.results,
                                         snakemake.params.results_root))
